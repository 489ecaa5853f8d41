#pragma once

#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/sut/sut_run.hpp"
#include "faultline/harness/sut/sut_scenario.hpp"

namespace faultline::reports {
class Metrics;
}

namespace faultline::harness::sut {

/// The SUT scenarios of `paths` (files, or directories standing for their *.json files,
/// sorted), keeping those whose `needs` is in `needs` ("ofi,verbs,mpi"; empty: all). The first
/// bad file is the error, naming the file, the field and what was expected.
Result<std::vector<SutScenario>> load_sut_scenarios(const std::vector<std::string>& paths,
                                                    const std::string& needs);

struct SutSuiteSettings {
  std::string faultline_binary;  ///< each role runs as `faultline sut exec`
  std::string report_dir;        ///< report.json, junit.xml, summary.md; each role's files below
  std::string suite;             ///< the report's suite name ("sut"; "" for files named)
  reports::Metrics* metrics = nullptr;
  /// Runs one scenario; empty: here (run_sut_scenario). The coordinator's places its roles on
  /// its agents.
  std::function<Result<ScenarioOutcome>(const SutScenario&)> run_scenario;
  /// The report's run.agents; null: this machine as the one agent "local".
  nlohmann::json agents;
};

/// Runs `scenarios` one after the other into one report directory, as `faultline run` does
/// for engine scenarios (every file rewritten after each scenario), printing a line for each.
/// Returns the exit code: 0 every verdict as expected, 1 one was not, 3 the harness could not
/// run one or write the report.
int run_sut_suite(const std::vector<SutScenario>& scenarios, const SutSuiteSettings& settings,
                  std::ostream& out, std::ostream& err);

}  // namespace faultline::harness::sut
