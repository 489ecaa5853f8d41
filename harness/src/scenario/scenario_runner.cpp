#include "faultline/harness/scenario/scenario_runner.hpp"

#include <algorithm>

#include "faultline/harness/net_address.hpp"
#include "faultline/harness/scenario/scenario.hpp"
#include "faultline/harness/scenario/step_ops.hpp"
#include "faultline/transports/fault/fault_device.hpp"
#include "faultline/transports/json.hpp"
#include "faultline/transports/meter/traffic_meter.hpp"
#include "faultline/transports/port_counters.hpp"

namespace faultline::harness {

namespace {

using nlohmann::json;

bool contains(const json& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// Why this target cannot run the scenario, or "" when it can.
std::string unmet_requirement(const json& document, const std::string& role,
                              const transports::Target& target,
                              const transports::DeviceInfo& device) {
  const json requirements = document.value("requires", json::object());
  if (requirements.contains("transports") &&
      !contains(requirements.at("transports"), target.transport))
    return "needs transport " + requirements.at("transports").dump() + ", this run uses " +
           target.transport;
  if (requirements.contains("providers") &&
      !contains(requirements.at("providers"), device.provider))
    return "needs provider " + requirements.at("providers").dump() + ", this run uses " +
           device.provider;
  const json capabilities = device.capabilities;
  for (const auto& capability : capabilities_needed(document, role)) {
    if (!capabilities.value(capability, false))
      return device.transport + "/" + device.provider + " device " + device.name + " lacks " +
             capability;
  }
  return "";
}

// A step whose point is a failure seen to happen: an error expected, a wrong result the
// harness must catch, a completion with an error status, or violations a server must refuse.
bool expects_failure(const json& step) {
  if (step.value("violations", 0) > 0) return true;
  const json expect = step.value("expect", json());
  if (!expect.is_object()) return false;
  if (expect.contains("error") || expect.value("data_mismatch", false)) return true;
  if (!expect.contains("status")) return false;
  const json& status = expect.at("status");
  if (status.is_string()) return status != "SUCCESS";
  return std::none_of(status.begin(), status.end(),
                      [](const json& each) { return each == "SUCCESS"; });
}

json applied_faults(const StepState& state, uint64_t seed) {
  json applied = json::array();
  if (state.faults_applied) {
    for (const auto& fault : *state.faults_applied)
      applied.push_back({{"kind", fault.kind}, {"detail", fault.detail}});
  }
  return {{"seed", seed}, {"applied", applied}};
}

// What the device's port counters grew by during the scenario. Both sides of a pair on one
// device see each other's traffic in it, so `host` lets a reader count a port once.
json port_counter_growth(const std::optional<transports::PortCounters>& before) {
  if (!before) return nullptr;
  const auto after = transports::read_port_counters(before->device, before->port);
  if (!after) return nullptr;
  return {{"host", host_name()},
          {"device", before->device},
          {"port", before->port},
          {"grown", transports::grown_counters(*before, *after)}};
}

// The side's device as its steps see it: the scenario's faults for this side, then the traffic
// meter outermost, so it counts what the steps see, injected faults included.
std::unique_ptr<transports::Device> decorated_device(
    std::unique_ptr<transports::Device> device, StepState& state,
    const std::shared_ptr<transports::meter::TrafficCounts>& traffic) {
  auto plan = fault_plan_for(*state.document, state.role, state.seed, state.rank);
  if (!plan.empty()) {
    state.faults_applied = std::make_shared<transports::fault::FaultLog>();
    device =
        transports::fault::wrap_device(std::move(device), std::move(plan), state.faults_applied);
  }
  return transports::meter::meter_device(std::move(device), traffic);
}

}  // namespace

ScenarioOutcome run_scenario_document(ScenarioLink& link, const json& document,
                                      const std::string& role, uint64_t run_seed,
                                      const transports::Target& target, size_t rank, size_t size) {
  const std::string id = document.at("id");
  // Every rank of a ring plays the same role; its rank tells the seeds apart.
  const uint64_t seed = side_seed(
      run_seed, id,
      topology_of(document) == Topology::kRing ? role + "#" + std::to_string(rank) : role);
  ScenarioOutcome outcome;
  auto device = open_target_device(target);
  if (!device.ok()) {
    return {Verdict::kError, "", device.error().describe(), "", device.error().hint};
  }
  if (auto why = unmet_requirement(document, role, target, device.value()->info()); !why.empty()) {
    return {Verdict::kSkip, "", why, "", ""};
  }

  StepState state;
  state.document = &document;
  state.link = &link;
  state.role = role;
  state.rank = rank;
  state.size = size;
  state.seed = seed;
  const auto traffic = std::make_shared<transports::meter::TrafficCounts>();
  state.device = decorated_device(std::move(device).value(), state, traffic);
  const transports::DeviceInfo& device_info = state.device->info();
  const auto counters_before = transports::read_port_counters(device_info.name, device_info.port);

  link.set_progress([&state] { progress(state); });
  json steps = json::array();
  std::string detected;  // what the steps that expect a failure saw it do
  const auto& ops = step_ops();
  const json& all_steps = document.at("steps");
  for (size_t i = 0; i < all_steps.size(); ++i) {
    const json& step = all_steps[i];
    if (step.contains("role") && step.at("role") != role) continue;
    const std::string op = step.at("op");
    const std::string label = "step " + std::to_string(i) + " " + op;
    link.step(label);
    const StepResult result = ops.at(op).run(state, step);
    steps.push_back({{"step", i},
                     {"op", op},
                     {"met", result.met},
                     {"note", result.met ? result.note : result.observed}});
    if (result.met && (expects_failure(step) || state.dies_by != 0))
      detected += (detected.empty() ? "" : "; ") + label + ": " + result.note;
    if (state.dies_by != 0) break;
    if (!result.met) {
      outcome.verdict = result.verdict;
      outcome.expected = label + ": " + result.expected;
      outcome.observed = result.observed;
      outcome.evidence = label + (result.note.empty() ? "" : ": " + result.note);
      outcome.hint = result.hint;
      break;
    }
  }
  if (outcome.verdict == Verdict::kPass) {
    // A scenario whose point is a failure seen to happen says what was seen, not only "pass".
    constexpr size_t kLongest = 600;
    outcome.observed = detected.size() > kLongest ? detected.substr(0, kLongest) + "..." : detected;
    // Both sides end together, so no endpoint goes away under the peer's last operation (a
    // side that dies leaves without: its peer's barriers count it as there).
    auto done = state.dies_by != 0 ? Status{} : link.barrier("faultline.end");
    if (!done.ok()) {
      outcome = {Verdict::kError, "", done.error().describe(), "", ""};
    }
  }
  link.set_progress(nullptr);
  outcome.details = {{"role", role},
                     {"rank", rank},
                     {"steps", steps},
                     {"faults", applied_faults(state, seed)},
                     {"traffic", traffic->to_json()},
                     {"port_counters", port_counter_growth(counters_before)}};
  outcome.dies_by = state.dies_by;
  return outcome;
}

}  // namespace faultline::harness
