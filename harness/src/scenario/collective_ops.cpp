// The collective step operations of ring scenarios: ring.connect, then collective.allreduce,
// allgather, reduce_scatter, broadcast and sendrecv, each checked against a reference the
// rank computes itself (every rank's input is a known function of its rank).
#include <cstring>
#include <string>

#include "faultline/core/hex.hpp"
#include "faultline/harness/scenario/step_ops.hpp"
#include "faultline/protocols/collective/ring.hpp"
#include "faultline/transports/data_pattern.hpp"

namespace faultline::harness {

namespace {

using nlohmann::json;
using protocols::collective::DataType;
using protocols::collective::Ring;

// The ring of one side: endpoints to the next and from the previous rank, and the ring
// engine on them. A reconnect replaces all three.
class RingSession final : public ProtocolSession {
 public:
  explicit RingSession(StepState& /*state*/) {}

  std::unique_ptr<transports::Endpoint> to_next;
  std::unique_ptr<transports::Endpoint> from_prev;
  std::unique_ptr<Ring> ring;

  /// The old endpoints go first, then the ring whose memory they may still use.
  void reset() {
    close_own_endpoints();
    ring.reset();
  }

  // A ring keeps what it reaps for its next exchange to judge; driving it lets the
  // neighbours' transfers complete while this rank waits. Its endpoints are its own.
  bool progress() override {
    if (ring) (void)ring->drive();
    return false;
  }
  void close_own_endpoints() override {
    to_next.reset();
    from_prev.reset();
  }
};

RingSession& ring_session(StepState& state) { return session_of<RingSession>(state, "ring"); }

Result<Ring*> ring_of(StepState& state) {
  if (RingSession& session = ring_session(state); session.ring) return session.ring.get();
  return Error{ErrorCode::kInvalidArgument, "a collective step before ring.connect"};
}

StepResult ring_connect(StepState& state, const json& step) {
  RingSession& session = ring_session(state);
  session.reset();
  // Every field of `config` applies to both ring endpoints (depths default to 64).
  transports::EndpointConfig defaults;
  defaults.send_depth = 64;
  defaults.recv_depth = 64;
  const transports::EndpointConfig config = endpoint_config_of(step, defaults);
  auto next = state.device->create_endpoint(config);
  if (!next.ok()) return failed("ring endpoints are created", next.error().describe());
  auto prev = state.device->create_endpoint(config);
  if (!prev.ok()) return failed("ring endpoints are created", prev.error().describe());
  session.to_next = std::move(next).value();
  session.from_prev = std::move(prev).value();
  auto peers = state.link->exchange({{"to_next", to_hex(session.to_next->address())},
                                     {"from_prev", to_hex(session.from_prev->address())}});
  if (!peers.ok()) return broken(peers.error());
  try {
    const json& ranks = peers->at("ranks");
    const size_t n = state.size;
    const auto& next_rank = ranks.at((state.rank + 1) % n);
    const auto& prev_rank = ranks.at((state.rank + n - 1) % n);
    if (auto s = session.to_next->connect(from_hex(next_rank.at("from_prev"))); !s.ok())
      return failed("connected to the next rank", s.error().describe());
    if (auto s = session.from_prev->connect(from_hex(prev_rank.at("to_next"))); !s.ok())
      return failed("connected to the previous rank", s.error().describe());
  } catch (const json::exception& e) {
    return broken(Error{ErrorCode::kProtocolViolation, std::string("ring peer info: ") + e.what()});
  }
  protocols::collective::RingOptions ring_options;
  ring_options.chunk_bytes = step.value("chunk_bytes", ring_options.chunk_bytes);
  ring_options.max_recvs_in_flight =
      step.value("max_recvs_in_flight", ring_options.max_recvs_in_flight);
  ring_options.check_status = step.value("check_status", true);
  ring_options.over_post_receives = step.value("mutation", "") == "over_post_receives";
  auto ring = Ring::create(
      {*state.device, *session.to_next, *session.from_prev, state.rank, state.size}, ring_options);
  if (!ring.ok()) return broken(ring.error());
  session.ring = std::move(ring).value();
  // Endpoints are connected on both ends before any rank sends.
  if (auto ready = state.link->barrier("ring.connected"); !ready.ok()) return broken(ready.error());
  return met("rank " + std::to_string(state.rank) + " of " + std::to_string(state.size) +
             " connected to both neighbours");
}

// Rank r's input element e: small integers, exact in every type and in any sum of 16 ranks.
double input_value(size_t rank, size_t element) {
  return static_cast<double>((element * 7 + rank * 3) % 13);
}

void write_value(std::byte* at, DataType type, double value) {
  switch (type) {
    case DataType::kFloat32: {
      const auto v = static_cast<float>(value);
      std::memcpy(at, &v, 4);
      break;
    }
    case DataType::kInt32: {
      const auto v = static_cast<int32_t>(value);
      std::memcpy(at, &v, 4);
      break;
    }
    case DataType::kFloat16: {
      const uint16_t v = protocols::collective::float_to_half(static_cast<float>(value));
      std::memcpy(at, &v, 2);
      break;
    }
  }
}

double read_value(const std::byte* at, DataType type) {
  switch (type) {
    case DataType::kFloat32: {
      float v;
      std::memcpy(&v, at, 4);
      return v;
    }
    case DataType::kInt32: {
      int32_t v;
      std::memcpy(&v, at, 4);
      return v;
    }
    case DataType::kFloat16: {
      uint16_t v;
      std::memcpy(&v, at, 2);
      return protocols::collective::half_to_float(v);
    }
  }
  return 0;
}

// Runs one ring operation and asserts the ring's receive bound over it: never a receive
// posted past the chunks an exchange expects (RMLX's phantom receives consumed the next
// exchange's chunks).
template <typename Operation>
Status within_receive_bound(Ring& ring, size_t rank, Operation&& operation) {
  const uint64_t before = ring.stats().receives_beyond_expected;
  Status status = operation();
  const uint64_t beyond = ring.stats().receives_beyond_expected - before;
  if (!status.ok() || beyond == 0) return status;
  return Error{ErrorCode::kProtocolViolation,
               "rank " + std::to_string(rank) + " posted " + std::to_string(beyond) +
                   " receive(s) beyond the chunks it expected (phantom receives, left for the "
                   "next exchange to consume)"}
      .with_hint("post at most the chunks still expected (RMLX PR #87)");
}

// What one collective step computes, on which data.
struct CollectiveCall {
  std::string op;
  DataType type = DataType::kFloat32;
  size_t width = 4;  // bytes per element
  size_t elements = 0;
  size_t root = 0;
};

// The value element `e` holds after the call on every rank that defines it: the root's input
// (broadcast), its owner's input (allgather), or the sum over ranks.
double expected_value(const CollectiveCall& call, Ring& ring, size_t ranks, size_t e) {
  if (call.op == "broadcast") return input_value(call.root, e);
  if (call.op == "allgather") {
    for (size_t r = 0; r < ranks; ++r) {
      const auto [begin, end] = ring.segment(call.elements * call.width, call.type, r);
      if (e * call.width >= begin && e * call.width < end) return input_value(r, e);
    }
  }
  double sum = 0;
  for (size_t r = 0; r < ranks; ++r) sum += input_value(r, e);
  return sum;
}

// Every element the call defines on this rank against the CPU reference.
StepResult check_result(const CollectiveCall& call, Ring& ring, const StepState& state,
                        const std::vector<std::byte>& data, const std::string& what,
                        bool mismatch_expected) {
  const auto own = ring.segment(data.size(), call.type, state.rank);
  for (size_t e = 0; e < call.elements; ++e) {
    const size_t at = e * call.width;
    if (call.op == "reduce_scatter" && (at < own.first || at >= own.second)) continue;
    const double got = read_value(data.data() + at, call.type);
    const double expected = expected_value(call, ring, state.size, e);
    if (got == expected) continue;
    StepResult mismatch =
        failed(what + " equals the CPU reference", "data_mismatch: element " + std::to_string(e) +
                                                       " is " + std::to_string(got) +
                                                       ", expected " + std::to_string(expected));
    for (const auto& ignored : ring.stats().ignored_errors)
      mismatch.note += (mismatch.note.empty() ? "completion errors ignored: " : "; ") + ignored;
    // Expected when the protocol ignores completion status: the harness's own data check
    // is what catches the corruption.
    if (mismatch_expected)
      return met("caught as expected: " + mismatch.observed + "; " + mismatch.note);
    return mismatch;
  }
  if (mismatch_expected) {
    return failed(what + " gives a data_mismatch the protocol itself missed",
                  "the result equals the CPU reference");
  }
  return met(what + " equals the CPU reference (" + std::to_string(ring.stats().chunks_sent) +
             " chunks sent, at most " + std::to_string(ring.stats().most_receives_in_flight) +
             " receives in flight)");
}

StepResult collective(StepState& state, const json& step, const std::string& op) {
  auto ring = ring_of(state);
  if (!ring.ok()) return broken(ring.error());
  CollectiveCall call;
  call.op = op;
  call.elements = step.at("elements");
  call.type =
      protocols::collective::data_type_from_string(step.value("dtype", std::string("float32")))
          .value_or(DataType::kFloat32);
  call.width = protocols::collective::element_size(call.type);
  call.root = step.value("root", size_t{0}) % state.size;
  std::vector<std::byte> data(call.elements * call.width);
  for (size_t e = 0; e < call.elements; ++e)
    write_value(data.data() + e * call.width, call.type, input_value(state.rank, e));

  const Status status = within_receive_bound(*ring.value(), state.rank, [&]() -> Status {
    if (op == "allreduce") return ring.value()->allreduce(data, call.type);
    if (op == "reduce_scatter") return ring.value()->reduce_scatter(data, call.type);
    if (op == "allgather") return ring.value()->allgather(data, call.type);
    return ring.value()->broadcast(data, call.root);
  });
  const std::string what = "collective." + op + " of " + std::to_string(call.elements) + " " +
                           std::string(protocols::collective::to_string(call.type));
  const bool mismatch_expected =
      step.contains("expect") && step.at("expect").value("data_mismatch", false);
  if (!status.ok() || (step.contains("expect") && !mismatch_expected))
    return judge_status(step, status, what, "");
  return check_result(call, *ring.value(), state, data, what, mismatch_expected);
}

StepResult sendrecv(StepState& state, const json& step) {
  auto ring = ring_of(state);
  if (!ring.ok()) return broken(ring.error());
  const size_t bytes = step.at("bytes");
  std::vector<std::byte> out(bytes);
  std::vector<std::byte> in(bytes);
  transports::fill_pattern(out.data(), bytes, static_cast<unsigned>(state.rank + 1));
  const std::string what = "collective.sendrecv of " + std::to_string(bytes) + " bytes";
  const Status status = within_receive_bound(*ring.value(), state.rank,
                                             [&] { return ring.value()->exchange(out, in); });
  if (!status.ok() || step.contains("expect")) return judge_status(step, status, what, "");
  const auto prev = static_cast<unsigned>((state.rank + state.size - 1) % state.size + 1);
  if (size_t at = transports::first_pattern_mismatch(in.data(), bytes, prev); at != bytes) {
    return failed(what + " from the previous rank arrive intact",
                  "data_mismatch: byte " + std::to_string(at) + " differs");
  }
  return met(what + " from the previous rank arrived intact (at most " +
             std::to_string(ring.value()->stats().most_receives_in_flight) +
             " receives in flight)");
}

uint64_t collective_memory(const json& step) {
  // Input, output and staging of 4-byte elements.
  constexpr uint64_t kBytesPerElement = 12;
  return kBytesPerElement * step.value("elements", uint64_t{0});
}

uint64_t sendrecv_memory(const json& step) { return 2 * step.value("bytes", uint64_t{0}); }

}  // namespace

void add_collective_ops(StepOps& ops) {
  ops["ring.connect"] = {ring_connect, {}};
  for (const char* op : {"allreduce", "allgather", "reduce_scatter", "broadcast"}) {
    const std::string name = op;
    ops["collective." + name] = {
        [name](StepState& s, const json& step) { return collective(s, step, name); },
        {},
        collective_memory};
  }
  ops["collective.sendrecv"] = {sendrecv, {}, sendrecv_memory};
}

}  // namespace faultline::harness
