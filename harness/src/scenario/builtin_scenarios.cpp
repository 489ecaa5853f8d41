#include "faultline/harness/scenario/builtin_scenarios.hpp"
#include "builtin_pair_side.hpp"
#include "builtin_steps.hpp"
#include "probe_scenario.hpp"
#include "side_evidence.hpp"

#include <csignal>
#include <cstdlib>
#include <thread>

#include "faultline/core/hex.hpp"
#include "faultline/harness/base/first_contact.hpp"
#include "faultline/transports/data_pattern.hpp"
#include "faultline/transports/json.hpp"
#include "faultline/transports/memory_provider.hpp"
#include "faultline/transports/registered_buffer.hpp"
#include "faultline/transports/registry.hpp"

namespace faultline::harness {

namespace {

using namespace transports;
using namespace std::chrono_literals;

constexpr size_t kLargest = 1 << 20;
constexpr std::array<size_t, 5> kSizes{1, 64, 4096, 65536, kLargest};

// One side of the built-in pingpong: sizes 1 B to 1 MiB sent both ways, then a 1 MiB RDMA
// write checked by the peer.
class PingPong {
 public:
  using Outcome = std::optional<ScenarioOutcome>;

  explicit PingPong(ScenarioContext& context)
      : context_(context), initiator_(context.role == "initiator"), side_(context, 10s) {}

  // The side's outcome with what its device saw (the traffic, bytes and latency, and the port
  // counters' growth), as a scenario file's side reports it.
  ScenarioOutcome run() {
    ScenarioOutcome outcome = steps().value_or(ScenarioOutcome{});
    side_.close();  // before the evidence is read
    if (device_) outcome.details = device_->details(context_.role);
    return outcome;
  }

 private:
  static constexpr unsigned kWriteSeed = 99;

  Outcome steps() {
    auto device = open_target_device(context_.target);
    if (!device.ok()) return harness_error(device.error());
    device_.emplace(std::move(device).value(), fault::FaultPlan{});
    EndpointConfig config;
    config.send_depth = 16;
    config.recv_depth = 16;
    if (auto bad = side_.connect(device_->device(), config, kLargest, kLargest)) return bad;
    for (size_t i = 0; i < kSizes.size(); ++i) {
      if (auto bad = ping_pong(i)) return bad;
    }
    if (initiator_) {
      context_.link.step("RDMA write 1 MiB");
      if (auto bad = side_.write_region(kLargest, kLargest, kWriteSeed)) return bad;
      context_.link.step("ask for the write check");
      if (auto bad = side_.ask_write_check("RDMA write of 1 MiB")) return bad;
    } else if (auto bad = side_.answer_write_check(kLargest, kWriteSeed, "RDMA write of 1 MiB")) {
      return bad;
    }
    return side_.finish();
  }

  // Size i: the initiator sends a ping and receives the pong; the responder the reverse.
  Outcome ping_pong(size_t i) {
    const size_t size = kSizes[i];
    const auto ping_seed = static_cast<unsigned>(2 * i + 1);
    const auto pong_seed = static_cast<unsigned>(2 * i + 2);
    const std::string bytes = std::to_string(size) + " B";
    if (initiator_) {
      context_.link.step("send " + bytes + " ping");
      if (auto bad = side_.send(size, ping_seed, i)) return bad;
      context_.link.step("receive " + bytes + " pong");
      return side_.receive(size, pong_seed, "pong");
    }
    context_.link.step("receive " + bytes + " ping");
    if (auto bad = side_.receive(size, ping_seed, "ping")) return bad;
    context_.link.step("send " + bytes + " pong");
    return side_.send(size, pong_seed, i);
  }

  ScenarioContext& context_;
  const bool initiator_;
  std::optional<MeteredSide> device_;
  PairSide side_;  // after the device: its endpoint and buffers go first
};

ScenarioOutcome pingpong(ScenarioContext& context) { return PingPong(context).run(); }

// Test-only: the harness's own crash and kill handling.
ScenarioOutcome abort_now(ScenarioContext& context) {
  context.link.step("call abort()");
  std::abort();
}

ScenarioOutcome dereference_null(ScenarioContext& context) {
  context.link.step("dereference a null pointer");
  volatile int* null_pointer = nullptr;
  *null_pointer = 1;
  return {};
}

ScenarioOutcome sleep_a_while(ScenarioContext& context) {
  const auto milliseconds = context.params.value("ms", 10000);
  context.link.step("sleep " + std::to_string(milliseconds) + " ms");
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
  return {};
}

bool test_scenarios_enabled() {
  const char* enabled = std::getenv("FAULTLINE_ENABLE_TEST_SCENARIOS");
  return enabled != nullptr && std::string(enabled) == "1";
}

}  // namespace

std::vector<BuiltinScenario> builtin_scenarios() {
  std::vector<BuiltinScenario> scenarios = {
      {"pingpong", "send/recv ping-pong 1 B to 1 MiB and a 1 MiB RDMA write, data checked",
       pingpong, 60s, false},
      {"probe",
       "the monitor's probe: 64 B round trips timed, an RDMA write burst timed, data checked",
       run_probe, 30s, false},
  };
  if (test_scenarios_enabled()) {
    scenarios.push_back(
        {"test.abort", "test only: the scenario process aborts", abort_now, 20s, true});
    scenarios.push_back({"test.segfault", "test only: the scenario process dereferences null",
                         dereference_null, 20s, true});
    scenarios.push_back(
        {"test.sleep", "test only: the scenario sleeps (params.ms)", sleep_a_while, 30s, true});
  }
  return scenarios;
}

const BuiltinScenario* find_builtin_scenario(const std::string& id) {
  static const std::vector<BuiltinScenario> scenarios = builtin_scenarios();
  for (const auto& scenario : scenarios) {
    if (scenario.id == id) return &scenario;
  }
  return nullptr;
}

}  // namespace faultline::harness
