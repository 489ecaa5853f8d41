#pragma once

// SUT scenarios on agents: a scenario becomes a program job (control/program_jobs.hpp) whose
// roles' bodies this area writes and, on each agent, reads back and starts under
// `faultline sut exec`.

#include <string>
#include <vector>

#include "faultline/harness/control/program_jobs.hpp"
#include "faultline/harness/sut/sut_run.hpp"
#include "faultline/harness/sut/sut_scenario.hpp"

namespace faultline::harness::sut {

/// The job of `scenario`: each role's command, faults, deadline and (the judged one's) checker.
ProgramJob program_job(const SutScenario& scenario);

/// The scenario's outcome from its job's: each summary checked as peer data (role_summary),
/// a role without one an `error` naming why, then judged.
ScenarioOutcome scenario_outcome(const SutScenario& scenario, const ProgramJobOutcome& job);

/// An agent's launcher of SUT roles: each under `faultline sut exec`, placeholders expanded
/// with this host's values.
class SutRoleLauncher final : public JobLauncher {
 public:
  /// `faultline_binary`: runs each role as `faultline sut exec`.
  explicit SutRoleLauncher(std::string faultline_binary);
  /// The kinds of this host has what they need for: "ofi", "verbs" (a device), "mpi" (mpirun).
  std::vector<std::string> kinds() const override;
  Result<pid_t> start(const nlohmann::json& body, const std::string& port,
                      const std::string& address, const std::string& dir) override;
  nlohmann::json summary(const std::string& dir) override;

 private:
  std::string faultline_binary_;
};

}  // namespace faultline::harness::sut
