#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/sut/sut_scenario.hpp"

namespace faultline::harness::sut {

/// How one SUT scenario went: the judged role's verdict against the expected one, and every
/// role's own sut.json.
struct ScenarioOutcome {
  std::string name;
  std::string file;
  std::string expect;
  std::string verdict;  ///< the judged role's ("" when skipped)
  std::string result;   ///< pass (verdict as expected), fail, or skip
  std::string reason;   ///< skip: what this machine lacks; fail: what happened instead
  double seconds = 0;
  nlohmann::json roles = nlohmann::json::object();  ///< role name -> its sut.json

  nlohmann::json to_json() const;
};

struct SutRunSettings {
  std::string faultline_binary;  ///< runs each role as `faultline sut exec`
  std::string report_dir;        ///< each scenario's roles under DIR/<scenario name>/<role>
};

/// Runs every role of `scenario` (each under `faultline sut exec`, so each has its own process
/// group and interposer log), waits for the judged one, gives the others the grace period and
/// then stops them (a peer still waiting is judged a hang, with its stacks).
Result<ScenarioOutcome> run_sut_scenario(const SutScenario& scenario,
                                         const SutRunSettings& settings);

}  // namespace faultline::harness::sut
