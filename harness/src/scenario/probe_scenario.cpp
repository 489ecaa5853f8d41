#include "probe_scenario.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "builtin_pair_side.hpp"
#include "builtin_steps.hpp"
#include "faultline/harness/scenario/scenario_runner.hpp"
#include "probe_timing.hpp"
#include "run_queue_clock.hpp"
#include "side_evidence.hpp"

namespace faultline::harness {

namespace {

using namespace transports;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr size_t kMessage = 64;
constexpr size_t kWrite = size_t{256} * 1024;
constexpr unsigned kBurstSeed = 77;

// The side's fault plan: the agent's own faults, as if the scenario named them for its role.
Result<fault::FaultPlan> agent_fault_plan(const ScenarioContext& context) {
  nlohmann::json faults = nlohmann::json::array();
  for (nlohmann::json fault : context.params.value("agent_faults", nlohmann::json::array())) {
    fault["role"] = context.role;
    faults.push_back(std::move(fault));
  }
  const uint64_t seed = side_seed(context.params.value("seed", uint64_t{0}), "probe", context.role);
  return fault_plan_for({{"faults", faults}}, context.role, seed);
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
        side_(context, std::chrono::milliseconds(std::clamp<int64_t>(
                           context.params.value("timeout_ms", int64_t{5000}), 100, 60000))) {}

  ScenarioOutcome run() {
    ScenarioOutcome outcome = steps().value_or(ScenarioOutcome{});
    side_.close();  // before the evidence is read
    if (device_) {
      nlohmann::json details = device_->details(context_.role);
      if (initiator_ && !times_.rtts.empty()) details["probe"] = measured();
      outcome.details = std::move(details);
    }
    return outcome;
  }

 private:
  Outcome steps() {
    auto device = open_target_device(context_.target);
    if (!device.ok()) return harness_error(device.error());
    auto plan = agent_fault_plan(context_);
    if (!plan.ok()) return harness_error(plan.error());
    device_.emplace(std::move(device).value(), std::move(plan).value());
    EndpointConfig config;
    config.send_depth = 32;
    config.recv_depth = 4;
    if (auto bad = side_.connect(device_->device(), config, kMessage, burst_)) return bad;
    context_.link.step((initiator_ ? "time " : "answer ") + std::to_string(round_trips_) +
                       " round trips");
    side_.watch_polls(&waits_);
    auto waited = waits_.so_far();
    for (size_t i = 0; i < round_trips_; ++i) {
      if (auto bad = initiator_ ? ping(i) : pong(i)) return bad;
      const auto now = waits_.so_far();
      times_.own_waits.push_back(std::chrono::duration<double>(now - waited).count());
      waited = now;
    }
    side_.watch_polls(nullptr);
    if (auto bad = exchange_waits()) return bad;
    if (auto bad =
            initiator_ ? burst() : side_.answer_write_check(burst_, kBurstSeed, "RDMA write burst"))
      return bad;
    return side_.finish();
  }

  Outcome ping(size_t i) {
    const auto started = Clock::now();
    if (auto bad = side_.send(kMessage, static_cast<unsigned>(2 * i + 1), i)) return bad;
    if (auto bad = side_.receive(kMessage, static_cast<unsigned>(2 * i + 2), "pong")) return bad;
    times_.rtts.push_back(std::chrono::duration<double>(Clock::now() - started).count());
    return std::nullopt;
  }

  // Each side's run-queue waits, one per round trip, to the initiator: a round trip in which
  // a side waited for a CPU measured the host, not the fabric.
  Outcome exchange_waits() {
    context_.link.step("exchange the host's waits");
    auto peer = context_.link.exchange(waits_message(times_.own_waits, waits_.available()));
    if (!peer.ok()) return harness_error(peer.error());
    if (waits_.available()) times_.peer_waits = peer_waits(*peer, round_trips_);
    return std::nullopt;
  }

  Outcome pong(size_t i) {
    if (auto bad = side_.receive(kMessage, static_cast<unsigned>(2 * i + 1), "ping")) return bad;
    return side_.send(kMessage, static_cast<unsigned>(2 * i + 2), i);
  }

  // RDMA writes of the whole region, timed; then the peer says whether they landed.
  Outcome burst() {
    context_.link.step("RDMA write burst of " + std::to_string(burst_) + " bytes");
    const auto started = Clock::now();
    if (auto bad = side_.write_region(burst_, kWrite, kBurstSeed)) return bad;
    burst_seconds_ = std::chrono::duration<double>(Clock::now() - started).count();
    return side_.ask_write_check("RDMA write burst");
  }

  nlohmann::json measured() const {
    nlohmann::json measured = round_trip_measurements(times_);
    measured["burst_bytes"] = burst_seconds_ > 0 ? burst_ : 0;
    measured["burst_seconds"] = burst_seconds_;
    return measured;
  }

  ScenarioContext& context_;
  const bool initiator_;
  const size_t round_trips_;
  const size_t burst_;
  std::optional<MeteredSide> device_;
  DelayingWaits waits_;  // opened on the thread that probes; watched by side_
  PairSide side_;        // after the device: its endpoint and buffers go first
  RoundTripTimes times_;
  double burst_seconds_ = 0;
};

}  // namespace

ScenarioOutcome run_probe(ScenarioContext& context) { return Probe(context).run(); }

}  // namespace faultline::harness
