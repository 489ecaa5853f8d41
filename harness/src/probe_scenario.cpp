#include "probe_scenario.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "builtin_steps.hpp"
#include "faultline/core/hex.hpp"
#include "faultline/harness/scenario/scenario_runner.hpp"
#include "faultline/transports/data_pattern.hpp"
#include "faultline/transports/json.hpp"
#include "scenario/side_evidence.hpp"

namespace faultline::harness {

namespace {

using namespace transports;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr size_t kMessage = 64;
constexpr size_t kWrite = 256 * 1024;
constexpr unsigned kBurstSeed = 77;

// The side's fault plan: the agent's own faults, as if the scenario named them for its role.
fault::FaultPlan agent_fault_plan(const ScenarioContext& context) {
  nlohmann::json faults = nlohmann::json::array();
  for (nlohmann::json fault : context.params.value("agent_faults", nlohmann::json::array())) {
    fault["role"] = context.role;
    faults.push_back(std::move(fault));
  }
  const uint64_t seed = side_seed(context.params.value("seed", uint64_t{0}), "probe", context.role);
  return fault_plan_for({{"faults", faults}}, context.role, seed);
}

double quantile(std::vector<double> sorted, double q) {
  if (sorted.empty()) return 0;
  std::sort(sorted.begin(), sorted.end());
  const auto at = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(at, sorted.size() - 1)];
}

class Probe {
 public:
  using Outcome = std::optional<ScenarioOutcome>;

  explicit Probe(ScenarioContext& context)
      : context_(context),
        initiator_(context.role == "initiator"),
        round_trips_(std::clamp<size_t>(context.params.value("round_trips", size_t{50}), 1, 10000)),
        burst_(std::clamp<size_t>(context.params.value("burst_bytes", size_t{4} << 20), kWrite,
                                  size_t{64} << 20) /
               kWrite * kWrite),
        timeout_(
            std::clamp<int64_t>(context.params.value("timeout_ms", int64_t{5000}), 100, 60000)) {}

  ScenarioOutcome run() {
    ScenarioOutcome outcome = steps().value_or(ScenarioOutcome{});
    endpoint_.reset();  // before the buffers, and before the evidence is read
    if (side_) {
      nlohmann::json details = side_->evidence();
      details["role"] = context_.role;
      if (initiator_ && !rtts_.empty()) details["probe"] = measured();
      outcome.details = std::move(details);
    }
    return outcome;
  }

 private:
  Outcome steps() {
    if (auto bad = connect()) return bad;
    for (size_t i = 0; i < round_trips_; ++i) {
      if (auto bad = initiator_ ? ping(i) : pong(i)) return bad;
    }
    if (auto bad = initiator_ ? burst() : check_burst()) return bad;
    if (Status done = context_.link.barrier("done"); !done.ok()) return harness_error(done.error());
    return std::nullopt;
  }

  Outcome connect() {
    auto device = open_target_device(context_.target);
    if (!device.ok()) return harness_error(device.error());
    side_.emplace(std::move(device).value(), agent_fault_plan(context_));
    EndpointConfig config;
    config.send_depth = 32;
    config.recv_depth = 4;
    auto endpoint = side_->device().create_endpoint(config);
    if (!endpoint.ok()) return harness_error(endpoint.error());
    endpoint_ = std::move(endpoint).value();
    for (auto [buffer, size] : {std::pair{&small_tx_, kMessage}, std::pair{&small_rx_, kMessage},
                                std::pair{&region_, burst_}}) {
      auto made = make_buffer(side_->device(), size);
      if (!made.ok()) return harness_error(made.error());
      *buffer = std::move(made).value();
    }
    const auto own_address = endpoint_->address();
    nlohmann::json info = FirstContact::own_info(side_->device().info().name);
    info["address"] = to_hex(own_address);
    info["region"] = region_.region->remote();
    auto peer = context_.link.exchange(info);
    if (!peer.ok()) return harness_error(peer.error());
    try {
      peer->at("region").get_to(peer_region_);
      const auto peer_address = from_hex(peer->at("address"));
      first_.joined(own_address, peer_address, side_->device().info().name, *peer);
      if (Status connected = endpoint_->connect(peer_address); !connected.ok())
        return harness_error(connected.error());
    } catch (const nlohmann::json::exception& e) {
      return harness_error(
          Error{ErrorCode::kProtocolViolation, std::string("peer info: ") + e.what()});
    }
    if (Status posted = repost(); !posted.ok()) return harness_error(posted.error());
    if (Status ready = context_.link.barrier("connected"); !ready.ok())
      return harness_error(ready.error());
    return std::nullopt;
  }

  Status repost() {
    const Segment whole = small_rx_.whole();
    return endpoint_->post_recv({1, {&whole, 1}});
  }

  Outcome expect(Opcode op, uint32_t bytes) {
    return expect_completion(*endpoint_, first_, op, bytes, timeout_);
  }

  Outcome send(size_t bytes, unsigned seed) {
    fill_pattern(small_tx_.data(), bytes, seed);
    const Segment message = small_tx_.segment(0, bytes);
    if (Status s =
            endpoint_->post_send({.wr_id = seed, .op = Opcode::kSend, .segments = {&message, 1}});
        !s.ok())
      return harness_error(s.error());
    return expect(Opcode::kSend, 0);
  }

  Outcome receive(size_t bytes, unsigned seed, const std::string& what) {
    if (auto bad = expect(Opcode::kRecv, static_cast<uint32_t>(bytes))) return bad;
    if (const size_t at = first_pattern_mismatch(small_rx_.data(), bytes, seed); at != bytes) {
      return failure(what + " of " + std::to_string(bytes) + " bytes as sent",
                     "byte " + std::to_string(at) + " differs", "probe data check");
    }
    if (Status s = repost(); !s.ok()) return harness_error(s.error());
    return std::nullopt;
  }

  Outcome ping(size_t i) {
    if (i == 0) context_.link.step("time " + std::to_string(round_trips_) + " round trips");
    const auto started = Clock::now();
    if (auto bad = send(kMessage, static_cast<unsigned>(2 * i + 1))) return bad;
    if (auto bad = receive(kMessage, static_cast<unsigned>(2 * i + 2), "pong")) return bad;
    rtts_.push_back(std::chrono::duration<double>(Clock::now() - started).count());
    return std::nullopt;
  }

  Outcome pong(size_t i) {
    if (i == 0) context_.link.step("answer " + std::to_string(round_trips_) + " round trips");
    if (auto bad = receive(kMessage, static_cast<unsigned>(2 * i + 1), "ping")) return bad;
    return send(kMessage, static_cast<unsigned>(2 * i + 2));
  }

  // RDMA writes of the whole region, then a one-byte ask; the answer says whether it landed.
  Outcome burst() {
    context_.link.step("RDMA write burst of " + std::to_string(burst_) + " bytes");
    fill_pattern(region_.data(), burst_, kBurstSeed);
    const auto started = Clock::now();
    for (size_t offset = 0; offset < burst_; offset += kWrite) {
      const Segment part = region_.segment(offset, kWrite);
      RemoteBuffer target = peer_region_;
      target.addr += offset;
      target.length = kWrite;
      if (Status s = endpoint_->post_send({.wr_id = 1000 + offset / kWrite,
                                           .op = Opcode::kRdmaWrite,
                                           .segments = {&part, 1},
                                           .remote = target});
          !s.ok())
        return harness_error(s.error());
    }
    for (size_t offset = 0; offset < burst_; offset += kWrite)
      if (auto bad = expect(Opcode::kRdmaWrite, 0)) return bad;
    burst_seconds_ = std::chrono::duration<double>(Clock::now() - started).count();
    if (auto bad = send(1, 0)) return bad;
    if (auto bad = expect(Opcode::kRecv, 1)) return bad;
    if (small_rx_.data()[0] != std::byte{1}) {
      return failure("the RDMA write burst lands intact", "the responder found other bytes",
                     "probe RDMA write data check");
    }
    return std::nullopt;
  }

  Outcome check_burst() {
    context_.link.step("wait for the RDMA write burst");
    if (auto bad = expect(Opcode::kRecv, 1)) return bad;
    const size_t at = first_pattern_mismatch(region_.data(), burst_, kBurstSeed);
    if (Status s = repost(); !s.ok()) return harness_error(s.error());
    small_tx_.data()[0] = at == burst_ ? std::byte{1} : std::byte{0};
    const Segment answer = small_tx_.segment(0, 1);
    if (Status s =
            endpoint_->post_send({.wr_id = 2, .op = Opcode::kSend, .segments = {&answer, 1}});
        !s.ok())
      return harness_error(s.error());
    if (auto bad = expect(Opcode::kSend, 0)) return bad;
    if (at != burst_) {
      return failure("the RDMA write burst lands intact", "byte " + std::to_string(at) + " differs",
                     "probe RDMA write data check");
    }
    return std::nullopt;
  }

  nlohmann::json measured() const {
    return {{"round_trips", rtts_.size()},
            {"rtt_seconds",
             {{"p50", quantile(rtts_, 0.5)},
              {"p99", quantile(rtts_, 0.99)},
              {"min", *std::min_element(rtts_.begin(), rtts_.end())},
              {"max", *std::max_element(rtts_.begin(), rtts_.end())}}},
            {"burst_bytes", burst_seconds_ > 0 ? burst_ : 0},
            {"burst_seconds", burst_seconds_}};
  }

  ScenarioContext& context_;
  const bool initiator_;
  const size_t round_trips_;
  const size_t burst_;
  const std::chrono::milliseconds timeout_;
  std::optional<MeteredSide> side_;
  RegisteredBuffer small_tx_;
  RegisteredBuffer small_rx_;
  RegisteredBuffer region_;
  RemoteBuffer peer_region_;
  FirstContact first_;
  std::vector<double> rtts_;
  double burst_seconds_ = 0;
  std::unique_ptr<Endpoint> endpoint_;  // last: destroyed before the buffers and the device
};

}  // namespace

ScenarioOutcome run_probe(ScenarioContext& context) { return Probe(context).run(); }

}  // namespace faultline::harness
