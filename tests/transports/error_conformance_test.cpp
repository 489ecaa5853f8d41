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

using namespace faultline::transports;
using namespace faultline::testing;

DeviceLimits limits_of(const TestTarget& target) { return open_device(target)->info().limits; }

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
FaultBehaviour expected_behaviour(const TestTarget& target, InducedFault fault) {
  const std::string provider = target.transport == "verbs" ? "verbs" : target.provider;
  switch (fault) {
    case InducedFault::kShortReceive:
      if (provider == "verbs")
        return {CompletionStatus::kRemInvReqErr, CompletionStatus::kLocLenErr,
                CompletionStatus::kWrFlushErr};
      return {kSuccess, CompletionStatus::kLocLenErr, kSuccess};
    case InducedFault::kWrongRemoteKey:
      if (provider == "verbs")
        return {CompletionStatus::kRemAccessErr, {}, CompletionStatus::kWrFlushErr};
      if (provider == "sockets") return {CompletionStatus::kRemAccessErr, {}, kSuccess};
      if (provider == "shm") return {kSuccess, {}, kSuccess, true};
      return {kSuccess, {}, kSuccess};
    case InducedFault::kWriteBeyondRegion:
      if (provider == "verbs")
        return {CompletionStatus::kRemAccessErr, {}, CompletionStatus::kWrFlushErr};
      if (provider == "sockets") return {CompletionStatus::kRemAccessErr, {}, kSuccess};
      if (provider == "shm") return {kSuccess, {}, kSuccess, true};
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
  TestBuffer source = pair.buffer_a(64);
  TestBuffer sink = pair.buffer_b(64);
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
void short_receive(const TestTarget& target) {
  TransportPair pair(target);
  TestBuffer source = pair.buffer_a(4096);
  TestBuffer sink = pair.buffer_b(4096);
  Segment send_segment = source.whole();
  Segment recv_segment = sink.segment(0, 100);
  REQUIRE_OK(pair.b().post_recv({41, {&recv_segment, 1}}));
  REQUIRE_OK(
      pair.a().post_send({.wr_id = 42, .op = Opcode::kSend, .segments = {&send_segment, 1}}));
  const FaultBehaviour expected = expected_behaviour(target, InducedFault::kShortReceive);
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
void wrong_remote_key(const TestTarget& target) {
  TransportPair pair(target);
  if (!pair.info().capabilities.rdma_write) FAULTLINE_SKIP(target.label() + " has no RDMA write");
  TestBuffer source = pair.buffer_a(4096);
  TestBuffer region = pair.buffer_b(4096);
  fill_pattern(source.data(), source.length, 9);
  RemoteBuffer remote = region.region->remote();
  remote.key ^= 0x5a5a5a;
  Segment segment = source.whole();
  REQUIRE_OK(pair.a().post_send(
      {.wr_id = 51, .op = Opcode::kRdmaWrite, .segments = {&segment, 1}, .remote = remote}));
  const FaultBehaviour expected = expected_behaviour(target, InducedFault::kWrongRemoteKey);
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
void write_beyond_region(const TestTarget& target) {
  TransportPair pair(target);
  if (!pair.info().capabilities.rdma_write) FAULTLINE_SKIP(target.label() + " has no RDMA write");
  TestBuffer source = pair.buffer_a(8192);
  fill_pattern(source.data(), source.length, 10);
  TestBuffer allocation = pair.buffer_a(3 * 4096);  // memory only; registered on B below
  auto region = pair.device_b().register_memory(allocation.data(), 4096, kAccessAll);
  REQUIRE_OK(region);
  RemoteBuffer remote = region.value()->remote();
  remote.length = 8192;
  Segment segment = source.whole();
  REQUIRE_OK(pair.a().post_send(
      {.wr_id = 61, .op = Opcode::kRdmaWrite, .segments = {&segment, 1}, .remote = remote}));
  const FaultBehaviour expected = expected_behaviour(target, InducedFault::kWriteBeyondRegion);
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
void send_depth_above_limit(const TestTarget& target) {
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
void too_many_segments(const TestTarget& target) {
  const DeviceLimits limits = limits_of(target);
  EndpointConfig config;
  config.max_send_sge = limits.max_send_sge;
  TransportPair pair(target, config);
  TestBuffer source = pair.buffer_a(4096);
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
void inline_above_limit(const TestTarget& target) {
  const DeviceLimits limits = limits_of(target);
  if (limits.max_inline_data == 0)
    FAULTLINE_SKIP(target.label() + " has no inline path (max_inline_data 0)");
  EndpointConfig config;
  config.max_inline = std::min<uint32_t>(limits.max_inline_data, 256);
  TransportPair pair(target, config);
  TestBuffer source = pair.buffer_a(8192);
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
void flush_after_error(const TestTarget& target) {
  TransportPair pair(target);
  TestBuffer sink = pair.buffer_b(3 * 1024);
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
void receive_queue_full(const TestTarget& target) {
  EndpointConfig config;
  config.recv_depth = 4;
  TransportPair pair(target, config);
  TestBuffer sink = pair.buffer_b(5 * 64);
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
