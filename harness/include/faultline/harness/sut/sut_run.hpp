#pragma once

#include <functional>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/sut/sut_scenario.hpp"

namespace faultline::harness::sut {

/// Every verdict a program of a SUT scenario can end with in a report: SutVerdict's names and
/// "error" (the harness could not judge it).
const std::vector<std::string>& role_verdict_names();

/// How one SUT scenario went: the judged role's verdict against the expected one, and how
/// every role ended.
struct ScenarioOutcome {
  std::string name;
  std::string file;
  std::string sha256;
  std::string expect;
  std::string judged;
  std::string verdict;  ///< the judged role's ("" when skipped, "error" when it left no result)
  std::string result;   ///< pass (verdict as expected), fail, skip, or error
  std::string reason;   ///< skip: what this machine lacks; otherwise what happened
  double seconds = 0;
  std::vector<std::string> role_names;              ///< in the scenario's order
  nlohmann::json roles = nlohmann::json::object();  ///< role name -> its report summary
  /// When the scenario ran more than once (the retry rule): what the earlier attempts ended
  /// with; "" when it ran once.
  std::string first_attempt;
  /// The attempt ended when a role failed by itself, no fault having acted in any role.
  bool failed_by_itself = false;

  /// Not yet run: the scenario's names, file, expectation and roles, no result.
  static ScenarioOutcome of(const SutScenario& scenario);
  /// Sets verdict, result and reason from the judged role's summary in `roles` (`detected`
  /// where it failed by its own check, none of its faults fired, after a peer's did).
  void judge();
  /// The scenario as report.json holds it (reports/schema/report.schema.json, `sut`).
  nlohmann::json to_report_scenario(size_t run_id) const;
};

/// A role's sut.json (`faultline sut exec`) as the report holds it: verdict, exit, timing,
/// the first error line, stacks, coverage (objects instrumented, bypasses), and `log`: where
/// the whole output is. A missing or malformed file gives the verdict `error`. A summary this
/// made before (an agent's, over the control channel) is checked the same way: only values of
/// the report schema's types come out.
nlohmann::json role_summary(const nlohmann::json& sut_json, const std::string& directory);

struct SutRunSettings {
  std::string faultline_binary;  ///< runs each role as `faultline sut exec`
  std::string report_dir;        ///< each scenario's roles under DIR/<scenario name>/<role>
};

/// Runs every role of `scenario` (each under `faultline sut exec`, so each has its own process
/// group and interposer log), waits for the judged one, gives the others the grace period and
/// then stops them (a peer still waiting is judged a hang, with its stacks).
Result<ScenarioOutcome> run_sut_scenario(const SutScenario& scenario,
                                         const SutRunSettings& settings);

/// How many times the retry rule runs a scenario at most.
inline constexpr int kAttempts = 3;

/// The retry rule, for any way of running a scenario (`sut run`, a coordinator's agents):
/// `attempt(0)`, and `attempt(N)` again while the program failed by itself before any fault
/// acted (a clean-run failure says nothing about the faults), up to kAttempts; the last
/// outcome, the earlier ones in its evidence, `folders(N)` saying where attempt N left its
/// files.
Result<ScenarioOutcome> run_with_retry_rule(
    const SutScenario& scenario, const std::function<Result<ScenarioOutcome>(int)>& attempt,
    const std::function<std::string(int)>& folders);

/// Where `sut run` puts attempt `number` of a scenario whose folder is `dir`: `dir` itself,
/// then DIR/retry, DIR/retry-2.
std::string attempt_folder(const std::string& dir, int number);

}  // namespace faultline::harness::sut
