// The collective step operations of ring scenarios: ring.connect (the ring, or recursive
// doubling), then collective.allreduce, allgather, reduce_scatter, broadcast and sendrecv, each
// checked against a reference the rank computes itself (every rank's input is a known function of
// its rank).
#include <cstring>
#include <string>

#include "faultline/core/hex.hpp"
#include "faultline/harness/scenario/step_ops.hpp"
#include "faultline/protocols/collective/recursive_doubling.hpp"
#include "faultline/transports/data_pattern.hpp"

namespace faultline::harness {

namespace {

using nlohmann::json;
using protocols::collective::DataType;
using protocols::collective::RecursiveDoubling;
using protocols::collective::Ring;
using protocols::collective::RingStats;

// The collective of one side: the ring (endpoints to the next and from the previous rank),
// or recursive doubling (an endpoint to and one from each partner), and the engine on them. A
// reconnect replaces both.
class RingSession final : public ProtocolSession {
 public:
  explicit RingSession(StepState& /*state*/) {}

  std::vector<std::unique_ptr<transports::Endpoint>> endpoints;
  std::unique_ptr<Ring> ring;
  std::unique_ptr<RecursiveDoubling> doubling;

  /// The old endpoints go first, then the engine whose memory they may still use.
  void reset() {
    close_own_endpoints();
    ring.reset();
    doubling.reset();
  }

  RingStats stats() const { return ring ? ring->stats() : doubling->stats(); }

  // An engine keeps what it reaps for its next exchange to judge; driving it lets the
  // neighbours' transfers complete while this rank waits. Its endpoints are its own.
  bool progress() override {
    if (ring) (void)ring->drive();
    if (doubling) (void)doubling->drive();
    return false;
  }
  void close_own_endpoints() override { endpoints.clear(); }
};

RingSession& ring_session(StepState& state) { return session_of<RingSession>(state, "ring"); }

Result<RingSession*> connected_session(StepState& state) {
  if (RingSession& session = ring_session(state); session.ring || session.doubling) return &session;
  return Error{ErrorCode::kInvalidArgument, "a collective step before ring.connect"};
}

// A new endpoint of this side, kept by the session.
Result<transports::Endpoint*> new_endpoint(StepState& state, RingSession& session,
                                           const transports::EndpointConfig& config) {
  auto endpoint = state.device->create_endpoint(config);
  if (!endpoint.ok()) return endpoint.error();
  session.endpoints.push_back(std::move(endpoint).value());
  return session.endpoints.back().get();
}

// The ring: this rank's to_next connected to the next rank's from_prev, its from_prev to the
// previous rank's to_next.
StepResult connect_ring(StepState& state, RingSession& session,
                        const transports::EndpointConfig& config,
                        const protocols::collective::RingOptions& options) {
  auto next = new_endpoint(state, session, config);
  if (!next.ok()) return failed("ring endpoints are created", next.error().describe());
  auto prev = new_endpoint(state, session, config);
  if (!prev.ok()) return failed("ring endpoints are created", prev.error().describe());
  transports::Endpoint& to_next = *next.value();
  transports::Endpoint& from_prev = *prev.value();
  auto peers = state.link->exchange(
      {{"to_next", to_hex(to_next.address())}, {"from_prev", to_hex(from_prev.address())}});
  if (!peers.ok()) return broken(peers.error());
  try {
    const json& ranks = peers->at("ranks");
    const size_t n = state.size;
    const auto& next_rank = ranks.at((state.rank + 1) % n);
    const auto& prev_rank = ranks.at((state.rank + n - 1) % n);
    if (auto s = to_next.connect(from_hex(next_rank.at("from_prev"))); !s.ok())
      return failed("connected to the next rank", s.error().describe());
    if (auto s = from_prev.connect(from_hex(prev_rank.at("to_next"))); !s.ok())
      return failed("connected to the previous rank", s.error().describe());
  } catch (const json::exception& e) {
    return broken(Error{ErrorCode::kProtocolViolation, std::string("ring peer info: ") + e.what()});
  }
  auto ring = Ring::create({*state.device, to_next, from_prev, state.rank, state.size}, options);
  if (!ring.ok()) return broken(ring.error());
  session.ring = std::move(ring).value();
  return met("rank " + std::to_string(state.rank) + " of " + std::to_string(state.size) +
             " connected to both neighbours");
}

// Recursive doubling or halving-doubling: for each partner p, this rank's to[p] connected to
// p's from[rank], and its from[p] to p's to[rank].
StepResult connect_doubling(StepState& state, RingSession& session,
                            const transports::EndpointConfig& config,
                            const protocols::collective::RingOptions& options,
                            protocols::collective::DoublingExchange exchange) {
  const std::vector<size_t> partners =
      protocols::collective::doubling_partners(state.rank, state.size);
  json to = json::object();
  json from = json::object();
  protocols::collective::DoublingLink link{*state.device, {}, state.rank, state.size};
  for (size_t p : partners) {
    auto to_peer = new_endpoint(state, session, config);
    if (!to_peer.ok()) return failed("partner endpoints are created", to_peer.error().describe());
    auto from_peer = new_endpoint(state, session, config);
    if (!from_peer.ok())
      return failed("partner endpoints are created", from_peer.error().describe());
    link.partners.push_back({p, *to_peer.value(), *from_peer.value()});
    to[std::to_string(p)] = to_hex(to_peer.value()->address());
    from[std::to_string(p)] = to_hex(from_peer.value()->address());
  }
  auto peers = state.link->exchange({{"to", to}, {"from", from}});
  if (!peers.ok()) return broken(peers.error());
  const std::string me = std::to_string(state.rank);
  try {
    const json& ranks = peers->at("ranks");
    for (const auto& partner : link.partners) {
      const json& theirs = ranks.at(partner.rank);
      const std::string whom = "partner rank " + std::to_string(partner.rank);
      if (auto s = partner.to_peer.connect(from_hex(theirs.at("from").at(me))); !s.ok())
        return failed("connected to " + whom, s.error().describe());
      if (auto s = partner.from_peer.connect(from_hex(theirs.at("to").at(me))); !s.ok())
        return failed("connected to " + whom, s.error().describe());
    }
  } catch (const json::exception& e) {
    return broken(
        Error{ErrorCode::kProtocolViolation, std::string("doubling peer info: ") + e.what()});
  }
  auto doubling = RecursiveDoubling::create(std::move(link), options, exchange);
  if (!doubling.ok()) return broken(doubling.error());
  session.doubling = std::move(doubling).value();
  return met("rank " + std::to_string(state.rank) + " of " + std::to_string(state.size) +
             " connected to its " + std::to_string(partners.size()) + " doubling partner(s)");
}

StepResult ring_connect(StepState& state, const json& step) {
  RingSession& session = ring_session(state);
  session.reset();
  // Every field of `config` applies to every endpoint (depths default to 64).
  transports::EndpointConfig defaults;
  defaults.send_depth = 64;
  defaults.recv_depth = 64;
  const transports::EndpointConfig config = endpoint_config_of(step, defaults);
  protocols::collective::RingOptions options;
  options.chunk_bytes = step.value("chunk_bytes", options.chunk_bytes);
  options.max_recvs_in_flight = step.value("max_recvs_in_flight", options.max_recvs_in_flight);
  options.check_status = step.value("check_status", true);
  options.over_post_receives = step.value("mutation", "") == "over_post_receives";
  const std::string algorithm = step.value("algorithm", "ring");
  using protocols::collective::DoublingExchange;
  StepResult connected =
      algorithm == "ring"
          ? connect_ring(state, session, config, options)
          : connect_doubling(state, session, config, options,
                             algorithm == "halving_doubling" ? DoublingExchange::kHalving
                                                             : DoublingExchange::kWholeMessage);
  if (!session.ring && !session.doubling) return connected;
  // Endpoints are connected on both ends before any rank sends.
  if (auto ready = state.link->barrier("ring.connected"); !ready.ok()) return broken(ready.error());
  return connected;
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
Status within_receive_bound(const RingSession& session, size_t rank, Operation&& operation) {
  const uint64_t before = session.stats().receives_beyond_expected;
  Status status = operation();
  const uint64_t beyond = session.stats().receives_beyond_expected - before;
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
double expected_value(const CollectiveCall& call, size_t ranks, size_t e) {
  if (call.op == "broadcast") return input_value(call.root, e);
  if (call.op == "allgather") {
    for (size_t r = 0; r < ranks; ++r) {
      const auto [begin, end] =
          protocols::collective::ring_segment(call.elements * call.width, call.type, ranks, r);
      if (e * call.width >= begin && e * call.width < end) return input_value(r, e);
    }
  }
  double sum = 0;
  for (size_t r = 0; r < ranks; ++r) sum += input_value(r, e);
  return sum;
}

// Every element the call defines on this rank against the CPU reference.
StepResult check_result(const CollectiveCall& call, const RingStats& stats, const StepState& state,
                        const std::vector<std::byte>& data, const std::string& what,
                        bool mismatch_expected) {
  const auto own =
      protocols::collective::ring_segment(data.size(), call.type, state.size, state.rank);
  for (size_t e = 0; e < call.elements; ++e) {
    const size_t at = e * call.width;
    if (call.op == "reduce_scatter" && (at < own.first || at >= own.second)) continue;
    const double got = read_value(data.data() + at, call.type);
    const double expected = expected_value(call, state.size, e);
    if (got == expected) continue;
    StepResult mismatch =
        failed(what + " equals the CPU reference", "data_mismatch: element " + std::to_string(e) +
                                                       " is " + std::to_string(got) +
                                                       ", expected " + std::to_string(expected));
    for (const auto& ignored : stats.ignored_errors)
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
  return met(what + " equals the CPU reference (" + std::to_string(stats.chunks_sent) +
             " chunks sent, at most " + std::to_string(stats.most_receives_in_flight) +
             " receives in flight)");
}

StepResult collective(StepState& state, const json& step, const std::string& op) {
  auto session = connected_session(state);
  if (!session.ok()) return broken(session.error());
  Ring* ring = session.value()->ring.get();
  RecursiveDoubling* doubling = session.value()->doubling.get();
  if (doubling && op != "allreduce")
    return broken("collective." + op +
                  " runs on the ring: this ring.connect's algorithm (recursive_doubling or "
                  "halving_doubling) has only allreduce");
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

  const Status status = within_receive_bound(*session.value(), state.rank, [&]() -> Status {
    if (doubling) return doubling->allreduce(data, call.type);
    if (op == "allreduce") return ring->allreduce(data, call.type);
    if (op == "reduce_scatter") return ring->reduce_scatter(data, call.type);
    if (op == "allgather") return ring->allgather(data, call.type);
    return ring->broadcast(data, call.root);
  });
  const std::string what = "collective." + op + " of " + std::to_string(call.elements) + " " +
                           std::string(protocols::collective::to_string(call.type));
  const bool mismatch_expected =
      step.contains("expect") && step.at("expect").value("data_mismatch", false);
  if (!status.ok() || (step.contains("expect") && !mismatch_expected))
    return judge_status(step, status, what, "");
  return check_result(call, session.value()->stats(), state, data, what, mismatch_expected);
}

StepResult sendrecv(StepState& state, const json& step) {
  auto session = connected_session(state);
  if (!session.ok()) return broken(session.error());
  Ring* ring = session.value()->ring.get();
  if (!ring) return broken("collective.sendrecv runs on the ring, not on recursive_doubling");
  const size_t bytes = step.at("bytes");
  std::vector<std::byte> out(bytes);
  std::vector<std::byte> in(bytes);
  transports::fill_pattern(out.data(), bytes, static_cast<unsigned>(state.rank + 1));
  const std::string what = "collective.sendrecv of " + std::to_string(bytes) + " bytes";
  const Status status =
      within_receive_bound(*session.value(), state.rank, [&] { return ring->exchange(out, in); });
  if (!status.ok() || step.contains("expect")) return judge_status(step, status, what, "");
  const auto prev = static_cast<unsigned>((state.rank + state.size - 1) % state.size + 1);
  if (size_t at = transports::first_pattern_mismatch(in.data(), bytes, prev); at != bytes) {
    return failed(what + " from the previous rank arrive intact",
                  "data_mismatch: byte " + std::to_string(at) + " differs");
  }
  return met(what + " from the previous rank arrived intact (at most " +
             std::to_string(ring->stats().most_receives_in_flight) + " receives in flight)");
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
