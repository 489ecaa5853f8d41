#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/harness/base/verdict.hpp"
#include "faultline/harness/control/scenario_link.hpp"
#include "faultline/transports/target.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::harness {

/// Where a scenario runs: transport, provider and device of the agent's choice.
using transports::open_target_device;

/// What one side of a scenario reports.
struct ScenarioOutcome {
  Verdict verdict = Verdict::kPass;
  std::string expected;
  std::string observed;
  std::string evidence;
  std::string hint;
  nlohmann::json details = nlohmann::json::object();  ///< steps, faults applied: report evidence
  /// A side whose scenario asked it to die (the `die` step): the process raises this signal
  /// once its result is sent, as a crash would end it.
  int dies_by = 0;
};

/// Everything a scenario side needs.
struct ScenarioContext {
  ScenarioLink& link;
  std::string role;  ///< "initiator" or "responder"
  nlohmann::json params;
  transports::Target target;
};

using ScenarioFunction = std::function<ScenarioOutcome(ScenarioContext&)>;

struct BuiltinScenario {
  std::string id;
  std::string title;
  ScenarioFunction run;
  std::chrono::milliseconds deadline;
  bool test_only = false;
};

/// The scenarios built into faultline until scenario files exist: `pingpong` (sizes 1 B to
/// 1 MiB, send and RDMA write, data checked). With $FAULTLINE_ENABLE_TEST_SCENARIOS=1 also
/// the test-only `test.abort`, `test.segfault` and `test.sleep` (for the harness's own tests).
std::vector<BuiltinScenario> builtin_scenarios();
const BuiltinScenario* find_builtin_scenario(const std::string& id);

}  // namespace faultline::harness
