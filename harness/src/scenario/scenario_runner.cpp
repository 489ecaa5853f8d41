#include "faultline/harness/scenario/scenario_runner.hpp"

#include <algorithm>

#include "faultline/harness/base/scenario_spec.hpp"
#include "faultline/harness/scenario/step_ops.hpp"
#include "faultline/transports/json.hpp"
#include "side_evidence.hpp"

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
  auto plan = fault_plan_for(document, role, seed, rank);
  if (!plan.ok()) return {Verdict::kError, "", plan.error().describe(), "", ""};
  MeteredSide side(std::move(device).value(), std::move(plan).value());
  state.device = side.take_device();

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
  outcome.details = side.evidence();
  outcome.details["role"] = role;
  outcome.details["rank"] = rank;
  outcome.details["steps"] = steps;
  outcome.dies_by = state.dies_by;
  return outcome;
}

}  // namespace faultline::harness
