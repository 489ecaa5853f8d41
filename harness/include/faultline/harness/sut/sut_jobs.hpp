#pragma once

// SUT scenarios on agents: a scenario becomes a program job (control/program_jobs.hpp). A role's
// body names the scenario (its name and sha256) and the role, never a command: an agent runs
// only roles of the SUT scenarios it was given itself (`agent --sut-scenarios DIR`), from its
// own copy, under `faultline sut exec`.

#include <string>
#include <vector>

#include "faultline/harness/control/program_jobs.hpp"
#include "faultline/harness/sut/sut_run.hpp"
#include "faultline/harness/sut/sut_scenario.hpp"

namespace faultline::harness::sut {

/// The job of `scenario`: each role's body names the scenario, its sha256 and the role.
ProgramJob program_job(const SutScenario& scenario);

/// The scenario's outcome from its job's: each summary checked as peer data (role_summary),
/// a role without one an `error` naming why, then judged.
ScenarioOutcome scenario_outcome(const SutScenario& scenario, const ProgramJobOutcome& job);

/// An agent's launcher of SUT roles: the roles of `scenarios` only, each as this agent's copy
/// says (command, faults, deadline, checker) and only when the coordinator's copy has the same
/// sha256; under `faultline sut exec`, placeholders expanded with this host's values.
class SutRoleLauncher final : public JobLauncher {
 public:
  /// `faultline_binary`: runs each role as `faultline sut exec`; `from`: where they came from,
  /// for messages.
  SutRoleLauncher(std::string faultline_binary, std::vector<SutScenario> scenarios,
                  std::string from);
  /// The kinds of this host has what they need for: "ofi", "verbs" (a device), "mpi" (mpirun).
  std::vector<std::string> kinds() const override;
  Result<pid_t> start(const nlohmann::json& body, const std::string& port,
                      const std::string& address, const std::string& dir) override;
  /// Its verbs device's address for a scenario over verbs (sut::first_role_address).
  std::string first_role_address(const nlohmann::json& body,
                                 const std::string& agent_address) const override;
  nlohmann::json summary(const std::string& dir) override;

 private:
  /// This agent's copy of the scenario named `name`, or null.
  const SutScenario* own_scenario(const std::string& name) const;
  std::string faultline_binary_;
  std::vector<SutScenario> scenarios_;
  std::string from_;
};

}  // namespace faultline::harness::sut
