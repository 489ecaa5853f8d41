// Transport conformance, errors: what each transport really reports for a receive buffer
// that is too small, a wrong remote key, a write past the end of the remote region, limits
// exceeded at creation and post time, and the error state. Where providers differ, the
// expected behaviour per target is in the table below and in transports/README.md.
#include <catch2/catch.hpp>

#include <optional>

#include "faultline/transports/transport.hpp"
#include "support/skip.hpp"
#include "support/status_assertions.hpp"
#include "support/transport_pair.hpp"
#include "transports/conformance_cases.hpp"

namespace {

using namespace faultline;
using namespace faultline::transports;
using namespace faultline::testing;

/// What one side shows for an operation: the status of its first completion, or nullopt when
/// it sees no completion at all.
using Outcome = std::optional<CompletionStatus>;

/// Observed behaviour of one induced fault on one target.
struct FaultBehaviour {
  Outcome initiator;  ///< the faulty operation's completion at its poster (A)
  Outcome target;     ///< what the other side (B) sees for it
  Outcome follow_up;  ///< A's next 64-byte send to B: is the connection still usable?
  /// The write landed where it should have been refused: under the wrong key, or in the
  /// bytes behind the registered region.
  bool unchecked_write = false;
};

enum class InducedFault { kShortReceive, kWrongRemoteKey, kWriteBeyondRegion };

constexpr auto kSuccess = CompletionStatus::kSuccess;

// What each target really does, asserted exactly; transports/README.md explains each row.
// The key is the ofi provider, or "verbs/<driver>"; a verbs driver without a row of its own
// is held to the InfiniBand specification (the "verbs" rows).
FaultBehaviour expected_behaviour(const DeviceInfo& device, InducedFault fault) {
  const std::string key = device.transport == "verbs"
                              ? (device.native_provider == "rdma_rxe" ? "verbs/rdma_rxe" : "verbs")
                              : device.provider;
  const bool verbs = device.transport == "verbs";
  constexpr auto kFlushed = CompletionStatus::kWrFlushErr;
  switch (fault) {
    case InducedFault::kShortReceive:
      // rxe (Linux 6.1) reports a malformed WQE at the receiver and a remote operation error
      // at the sender where the specification asks for a length error.
      if (key == "verbs/rdma_rxe")
        return {CompletionStatus::kRemOpErr, CompletionStatus::kLocQpOpErr, kFlushed};
      if (verbs) return {CompletionStatus::kRemInvReqErr, CompletionStatus::kLocLenErr, kFlushed};
      return {kSuccess, CompletionStatus::kLocLenErr, kSuccess};
    case InducedFault::kWrongRemoteKey:
      if (verbs) return {CompletionStatus::kRemAccessErr, {}, kFlushed};
      if (key == "sockets") return {CompletionStatus::kRemAccessErr, {}, kSuccess};
      if (key == "shm") return {kSuccess, {}, kSuccess, true};
      return {kSuccess, {}, kSuccess};
    case InducedFault::kWriteBeyondRegion:
      if (verbs) return {CompletionStatus::kRemAccessErr, {}, kFlushed};
      if (key == "sockets") return {CompletionStatus::kRemAccessErr, {}, kSuccess};
      if (key == "shm") return {kSuccess, {}, kSuccess, true};
      return {kSuccess, {}, kSuccess};
  }
  return {};
}

std::string describe(const Outcome& outcome) {
  return outcome ? std::string(to_string(*outcome)) : "no completion";
}

Outcome first_status(const std::vector<Completion>& completions) {
  if (completions.empty()) return std::nullopt;
  return completions.front().status;
}

void check_outcome(const char* what, const std::vector<Completion>& completions,
                   const Outcome& expected) {
  std::string seen;
  for (const auto& completion : completions) seen += "\n  " + completion.describe();
  INFO(what << ": expected " << describe(expected) << ", got"
            << (seen.empty() ? " nothing" : seen));
  CHECK(first_status(completions) == expected);
}

// After a fault: B posts a receive and A sends 64 bytes; A's completion says whether the
// connection survived the fault.
void check_follow_up_send(TransportPair& pair, const Outcome& expected) {
  transports::RegisteredBuffer source = pair.buffer_a(64);
  transports::RegisteredBuffer sink = pair.buffer_b(64);
  Segment send_segment = source.whole();
  Segment recv_segment = sink.whole();
  // A receive on an endpoint in the error state may be refused; that is part of the outcome.
  (void)pair.b().post_recv({900, {&recv_segment, 1}});
  Status posted =
      pair.a().post_send({.wr_id = 901, .op = Opcode::kSend, .segments = {&send_segment, 1}});
  if (!posted.ok()) {
    INFO("follow-up send refused at post: " << posted.error().describe());
    CHECK_FALSE(expected.has_value());
    return;
  }
  check_outcome("follow-up send", pair.drain_a(1000ms), expected);
}

// B posts a 100-byte receive; A sends 4096 bytes.
// Expect: LOC_LEN_ERR at the receiver (FI_ETRUNC on libfabric); the sender's outcome and the
// connection's health as the table says.
void short_receive(const Target& target) {
  TransportPair pair(target);
  transports::RegisteredBuffer source = pair.buffer_a(4096);
  transports::RegisteredBuffer sink = pair.buffer_b(4096);
  Segment send_segment = source.whole();
  Segment recv_segment = sink.segment(0, 100);
  REQUIRE_OK(pair.b().post_recv({41, {&recv_segment, 1}}));
  REQUIRE_OK(
      pair.a().post_send({.wr_id = 42, .op = Opcode::kSend, .segments = {&send_segment, 1}}));
  const FaultBehaviour expected = expected_behaviour(pair.info(), InducedFault::kShortReceive);
  auto at_receiver = pair.drain_b(1000ms);
  auto at_sender = pair.drain_a(300ms);
  check_outcome("receiver", at_receiver, expected.target);
  check_outcome("sender", at_sender, expected.initiator);
  if (!at_receiver.empty()) CHECK(at_receiver.front().wr_id == 41);
  check_follow_up_send(pair, expected.follow_up);
}
TRANSPORT_CONFORMANCE_CASE(short_receive, "receive buffer smaller than the send")

// A writes into B's region with a key that is not B's.
// Expect: REM_ACCESS_ERR at the writer on a conformant stack; what each provider really does
// is in the table.
void wrong_remote_key(const Target& target) {
  TransportPair pair(target);
  if (!pair.info().capabilities.rdma_write) FAULTLINE_SKIP(target.label() + " has no RDMA write");
  transports::RegisteredBuffer source = pair.buffer_a(4096);
  transports::RegisteredBuffer region = pair.buffer_b(4096);
  fill_pattern(source.data(), source.length, 9);
  RemoteBuffer remote = region.region->remote();
  remote.key ^= 0x5a5a5a;
  Segment segment = source.whole();
  REQUIRE_OK(pair.a().post_send(
      {.wr_id = 51, .op = Opcode::kRdmaWrite, .segments = {&segment, 1}, .remote = remote}));
  const FaultBehaviour expected = expected_behaviour(pair.info(), InducedFault::kWrongRemoteKey);
  auto at_writer = pair.drain_a(1000ms);
  auto at_target = pair.drain_b(300ms);
  check_outcome("writer", at_writer, expected.initiator);
  check_outcome("target", at_target, expected.target);
  const bool landed = first_pattern_mismatch(region.data(), region.length, 9) == region.length;
  INFO("the bytes " << (landed ? "landed under the wrong key" : "did not land"));
  CHECK(landed == expected.unchecked_write);
  check_follow_up_send(pair, expected.follow_up);
}
TRANSPORT_CONFORMANCE_CASE(wrong_remote_key, "RDMA write with a wrong remote key")

// B registers only the first 4 KiB of a 12 KiB allocation; A writes 8 KiB at its start.
// Expect: REM_ACCESS_ERR at the writer on a conformant stack, and the bytes behind the region
// untouched; the table records providers that write past the region.
void write_beyond_region(const Target& target) {
  TransportPair pair(target);
  if (!pair.info().capabilities.rdma_write) FAULTLINE_SKIP(target.label() + " has no RDMA write");
  transports::RegisteredBuffer source = pair.buffer_a(8192);
  fill_pattern(source.data(), source.length, 10);
  transports::RegisteredBuffer allocation =
      pair.buffer_a(3 * 4096);  // memory only; registered on B below
  auto region = pair.device_b().register_memory(allocation.data(), 4096, kAccessAll);
  REQUIRE_OK(region);
  RemoteBuffer remote = region.value()->remote();
  remote.length = 8192;
  Segment segment = source.whole();
  REQUIRE_OK(pair.a().post_send(
      {.wr_id = 61, .op = Opcode::kRdmaWrite, .segments = {&segment, 1}, .remote = remote}));
  const FaultBehaviour expected = expected_behaviour(pair.info(), InducedFault::kWriteBeyondRegion);
  auto at_writer = pair.drain_a(1000ms);
  auto at_target = pair.drain_b(300ms);
  check_outcome("writer", at_writer, expected.initiator);
  check_outcome("target", at_target, expected.target);
  const bool overran = std::any_of(allocation.data() + 4096, allocation.data() + 8192,
                                   [](std::byte b) { return b != std::byte{0}; });
  INFO("bytes behind the registered region " << (overran ? "were overwritten" : "are untouched"));
  CHECK(overran == expected.unchecked_write);
  check_follow_up_send(pair, expected.follow_up);
}
TRANSPORT_CONFORMANCE_CASE(write_beyond_region, "RDMA write past the end of the remote region")

// An endpoint asks for one more send work request than the device allows.
// Expect: refused before any native call, naming send_depth, the value and max_qp_wr.
void send_depth_above_limit(const Target& target) {
  auto device = open_device(target);
  const DeviceLimits limits = device->info().limits;
  EndpointConfig config;
  config.send_depth = limits.max_qp_wr + 1;
  auto endpoint = device->create_endpoint(config);
  REQUIRE_FALSE(endpoint.ok());
  const Error& error = endpoint.error();
  INFO(error.describe());
  CHECK(error.code == ErrorCode::kLimitExceeded);
  CHECK(error.call.empty());
  CHECK_THAT(error.message,
             Catch::Contains("send_depth " + std::to_string(limits.max_qp_wr + 1) +
                             " exceeds device max_qp_wr " + std::to_string(limits.max_qp_wr)));
}
TRANSPORT_CONFORMANCE_CASE(send_depth_above_limit, "send_depth above max_qp_wr is refused by name")

// A send with one segment more than the endpoint was granted.
// Expect: refused at post time naming max_send_sge; nothing reaches the peer.
void too_many_segments(const Target& target) {
  const DeviceLimits limits = limits_of(target);
  EndpointConfig config;
  config.max_send_sge = limits.max_send_sge;
  TransportPair pair(target, config);
  transports::RegisteredBuffer source = pair.buffer_a(4096);
  std::vector<Segment> segments(limits.max_send_sge + 1, source.segment(0, 16));
  Status posted = pair.a().post_send({.wr_id = 71, .op = Opcode::kSend, .segments = segments});
  REQUIRE_FALSE(posted.ok());
  INFO(posted.error().describe());
  CHECK(posted.error().code == ErrorCode::kLimitExceeded);
  CHECK_THAT(posted.error().message,
             Catch::Contains("exceeds max_send_sge " + std::to_string(limits.max_send_sge)));
  CHECK(pair.drain_b().empty());
}
TRANSPORT_CONFORMANCE_CASE(too_many_segments,
                           "send with more segments than max_send_sge is refused")

// An inline send one byte above the granted inline size.
// Expect: refused at post time naming max_inline; never silently truncated.
void inline_above_limit(const Target& target) {
  const DeviceLimits limits = limits_of(target);
  if (limits.max_inline_data == 0)
    FAULTLINE_SKIP(target.label() + " has no inline path (max_inline_data 0)");
  EndpointConfig config;
  config.max_inline = std::min<uint32_t>(limits.max_inline_data, 256);
  TransportPair pair(target, config);
  transports::RegisteredBuffer source = pair.buffer_a(8192);
  Segment segment = source.segment(0, config.max_inline + 1);
  Status posted = pair.a().post_send(
      {.wr_id = 81, .op = Opcode::kSend, .segments = {&segment, 1}, .inline_data = true});
  REQUIRE_FALSE(posted.ok());
  INFO(posted.error().describe());
  CHECK(posted.error().code == ErrorCode::kLimitExceeded);
  CHECK_THAT(posted.error().message, Catch::Contains(std::to_string(config.max_inline + 1) +
                                                     " bytes exceeds the granted max_inline " +
                                                     std::to_string(config.max_inline)));
}
TRANSPORT_CONFORMANCE_CASE(inline_above_limit, "inline send above the granted limit is refused")

// B posts 3 receives, then moves its endpoint to the error state.
// Expect: the 3 receives complete with WR_FLUSH_ERR, and a post afterwards fails by name.
void flush_after_error(const Target& target) {
  TransportPair pair(target);
  transports::RegisteredBuffer sink = pair.buffer_b(3 * 1024);
  for (uint64_t i = 0; i < 3; ++i) {
    Segment segment = sink.segment(i * 1024, 1024);
    REQUIRE_OK(pair.b().post_recv({100 + i, {&segment, 1}}));
  }
  REQUIRE_OK(pair.b().modify_to_error());
  auto flushed = pair.drain_b(500ms);
  REQUIRE(flushed.size() == 3);
  std::vector<uint64_t> ids;
  for (const auto& completion : flushed) {
    INFO(completion.describe());
    CHECK(completion.status == CompletionStatus::kWrFlushErr);
    ids.push_back(completion.wr_id);
  }
  std::sort(ids.begin(), ids.end());
  CHECK(ids == std::vector<uint64_t>{100, 101, 102});
  Segment segment = sink.segment(0, 1024);
  Status posted = pair.b().post_recv({200, {&segment, 1}});
  REQUIRE_FALSE(posted.ok());
  INFO(posted.error().describe());
  CHECK_THAT(posted.error().message, Catch::Contains("error state"));
}
TRANSPORT_CONFORMANCE_CASE(flush_after_error,
                           "error state flushes posted receives and refuses posts")

// B posts one receive more than its recv_depth.
// Expect: the last post is refused naming the queue and its depth.
void receive_queue_full(const Target& target) {
  EndpointConfig config;
  config.recv_depth = 4;
  TransportPair pair(target, config);
  transports::RegisteredBuffer sink = pair.buffer_b(5 * 64);
  for (uint64_t i = 0; i < 4; ++i) {
    Segment segment = sink.segment(i * 64, 64);
    REQUIRE_OK(pair.b().post_recv({i, {&segment, 1}}));
  }
  Segment segment = sink.segment(4 * 64, 64);
  Status posted = pair.b().post_recv({4, {&segment, 1}});
  REQUIRE_FALSE(posted.ok());
  INFO(posted.error().describe());
  CHECK(posted.error().code == ErrorCode::kLimitExceeded);
  CHECK_THAT(posted.error().message, Catch::Contains("recv_depth"));
}
TRANSPORT_CONFORMANCE_CASE(receive_queue_full, "receive beyond recv_depth is refused")

}  // namespace

namespace {

// B has no receive posted; A sends with rnr_retry 0.
// Expect on verbs: RNR_RETRY_EXC_ERR at the sender, no hang. libfabric buffers the message
// as unexpected instead (sender SUCCESS); the table says which.
void send_without_receive(const Target& target) {
  EndpointConfig config;
  config.rnr_retry = 0;
  TransportPair pair(target, config);
  transports::RegisteredBuffer source = pair.buffer_a(256);
  Segment segment = source.whole();
  REQUIRE_OK(pair.a().post_send({.wr_id = 111, .op = Opcode::kSend, .segments = {&segment, 1}}));
  const Outcome expected =
      target.transport == "verbs" ? Outcome{CompletionStatus::kRnrRetryExcErr} : Outcome{kSuccess};
  check_outcome("sender", pair.drain_a(1500ms), expected);
}
TRANSPORT_CONFORMANCE_CASE(send_without_receive, "send with no receive posted and rnr_retry 0")

// A posts 4 sends that B never receives (B's receives absent, rnr_retry 7 = retry forever),
// then moves A to the error state.
// Expect: all 4 sends complete with WR_FLUSH_ERR, in posting order; nothing hangs.
void flush_sends_in_flight(const Target& target) {
  TransportPair pair(target);
  REQUIRE(pair.info().capabilities.flushes_sends_on_error);
  transports::RegisteredBuffer source = pair.buffer_a(4 * 512);
  for (uint64_t i = 0; i < 4; ++i) {
    Segment segment = source.segment(i * 512, 512);
    REQUIRE_OK(
        pair.a().post_send({.wr_id = 120 + i, .op = Opcode::kSend, .segments = {&segment, 1}}));
  }
  REQUIRE(pair.drain_a(200ms).empty());  // stuck in RNR retry, not failed
  REQUIRE_OK(pair.a().modify_to_error());
  auto flushed = pair.drain_a(1000ms);
  REQUIRE(flushed.size() == 4);
  for (uint64_t i = 0; i < 4; ++i) {
    INFO(flushed[i].describe());
    CHECK(flushed[i].status == CompletionStatus::kWrFlushErr);
    CHECK(flushed[i].wr_id == 120 + i);
    CHECK(flushed[i].op == Opcode::kSend);
  }
  Segment segment = source.segment(0, 512);
  Status posted =
      pair.a().post_send({.wr_id = 130, .op = Opcode::kSend, .segments = {&segment, 1}});
  REQUIRE_FALSE(posted.ok());
  CHECK_THAT(posted.error().message, Catch::Contains("error state"));
}
// Only verbs has a QP error state that flushes sends (Capabilities::flushes_sends_on_error).
FAULTLINE_VERBS_CONFORMANCE_CASE(flush_sends_in_flight, "error state flushes sends in flight")

// Endpoint creation one above each advertised limit: CQ depth, SGEs, inline.
// Expect: refused before any native call, naming the field, the value and the limit.
void each_limit_refused(const Target& target) {
  auto device = open_device(target);
  const DeviceLimits limits = device->info().limits;
  struct Case {
    const char* field;
    const char* limit_name;
    uint64_t limit;
    void (*apply)(EndpointConfig&, uint32_t);
  };
  std::vector<Case> cases = {
      {"max_send_sge", "max_send_sge", limits.max_send_sge,
       [](EndpointConfig& c, uint32_t v) { c.max_send_sge = v; }},
      {"max_recv_sge", "max_recv_sge", limits.max_recv_sge,
       [](EndpointConfig& c, uint32_t v) { c.max_recv_sge = v; }},
      {"max_inline", "max_inline_data", limits.max_inline_data,
       [](EndpointConfig& c, uint32_t v) { c.max_inline = v; }},
      {"recv_depth", "max_recv_wr", limits.max_recv_wr,
       [](EndpointConfig& c, uint32_t v) { c.recv_depth = v; }},
  };
  if (limits.max_cqe) {
    cases.push_back({"cq_depth", "max_cqe", *limits.max_cqe,
                     [](EndpointConfig& c, uint32_t v) { c.cq_depth = v; }});
  }
  for (const Case& limit_case : cases) {
    CAPTURE(limit_case.field);
    EndpointConfig config;
    const auto value = static_cast<uint32_t>(limit_case.limit + 1);
    limit_case.apply(config, value);
    auto endpoint = device->create_endpoint(config);
    REQUIRE_FALSE(endpoint.ok());
    INFO(endpoint.error().describe());
    CHECK(endpoint.error().code == ErrorCode::kLimitExceeded);
    CHECK_THAT(endpoint.error().message,
               Catch::Contains(std::string(limit_case.field) + " " + std::to_string(value) +
                               " exceeds device " + limit_case.limit_name + " " +
                               std::to_string(limit_case.limit)));
  }
}
TRANSPORT_CONFORMANCE_CASE(each_limit_refused,
                           "CQ depth, SGEs, inline and recv depth above the limits are refused")

// With `raw`, an endpoint above max_qp_wr goes to the native create anyway.
// Expect: the native call's own answer, with the violated limit named beside it. verbs:
// ibv_create_qp fails with its errno; tcp and shm: fi_endpoint fails with FI_ENODATA;
// sockets accepts the size silently.
void raw_create_above_limit(const Target& target) {
  auto device = open_device(target);
  const DeviceLimits limits = device->info().limits;
  EndpointConfig config;
  config.send_depth = 3 * 65536 + 1;  // the Megatron/DeepEP formula
  config.derivations["send_depth"] = "3 x max_tokens_per_rank 65536 + 1";
  if (config.send_depth <= limits.max_qp_wr) {  // a device deeper than the formula (rxe)
    config.send_depth = limits.max_qp_wr + 1;
    config.derivations.clear();
  }
  config.cq_depth = 256;  // within max_cqe, so the QP size is what the native call judges
  config.raw = true;
  auto endpoint = device->create_endpoint(config);
  const std::string failing_call = target.transport == "verbs"    ? "ibv_create_qp"
                                   : target.provider == "sockets" ? ""
                                                                  : "fi_endpoint";
  if (failing_call.empty()) {
    INFO((endpoint.ok() ? std::string("accepted") : endpoint.error().describe()));
    CHECK(endpoint.ok());
    return;
  }
  REQUIRE_FALSE(endpoint.ok());
  const Error& error = endpoint.error();
  INFO(error.describe_with_hint());
  CHECK(error.call == failing_call);
  CHECK(error.sys_errno != 0);
  if (target.transport == "ofi") CHECK(error.native_name.rfind("FI_ENODATA", 0) == 0);
  CHECK_THAT(error.message, Catch::Contains("requested beyond the advertised limits: send_depth"));
  CHECK_THAT(error.message, Catch::Contains("exceeds device max_qp_wr"));
}
TRANSPORT_CONFORMANCE_CASE(raw_create_above_limit,
                           "raw create above max_qp_wr reaches the native call")

}  // namespace

namespace {

// A posts send_depth sends without polling, then one more.
// Expect: the extra post is refused naming the send queue and its depth; nothing is lost.
void send_queue_full(const Target& target) {
  EndpointConfig config;
  config.send_depth = 8;
  TransportPair pair(target, config);
  transports::RegisteredBuffer source = pair.buffer_a(64);
  transports::RegisteredBuffer sink = pair.buffer_b(9 * 64);
  for (uint64_t i = 0; i < 9; ++i) {
    Segment segment = sink.segment(i * 64, 64);
    REQUIRE_OK(pair.b().post_recv({i, {&segment, 1}}));
  }
  Segment segment = source.whole();
  for (uint64_t i = 0; i < 8; ++i) {
    REQUIRE_OK(
        pair.a().post_send({.wr_id = 400 + i, .op = Opcode::kSend, .segments = {&segment, 1}}));
  }
  Status posted =
      pair.a().post_send({.wr_id = 408, .op = Opcode::kSend, .segments = {&segment, 1}});
  REQUIRE_FALSE(posted.ok());
  INFO(posted.error().describe());
  CHECK(posted.error().code == ErrorCode::kLimitExceeded);
  CHECK_THAT(posted.error().message,
             Catch::Contains("send queue full") && Catch::Contains("send_depth"));
  CHECK(pair.drain_a().size() == 8);
  CHECK(pair.drain_b().size() == 8);
}
TRANSPORT_CONFORMANCE_CASE(send_queue_full, "send beyond send_depth is refused")

}  // namespace
