// An agent's launcher of SUT roles: the coordinator names a scenario, its sha256 and a role
// (sut_job.cpp); the agent runs that role from its own copy of the scenario, never a command
// line it was sent.
#include <algorithm>

#include "faultline/harness/base/strict_json.hpp"
#include "faultline/harness/sut/sut_jobs.hpp"
#include "faultline/harness/sut/sut_role.hpp"

namespace faultline::harness::sut {

using nlohmann::json;

SutRoleLauncher::SutRoleLauncher(std::string faultline_binary, std::vector<SutScenario> scenarios,
                                 std::string from)
    : faultline_binary_(std::move(faultline_binary)),
      scenarios_(std::move(scenarios)),
      from_(std::move(from)) {}

std::vector<std::string> SutRoleLauncher::kinds() const {
  std::vector<std::string> kinds;
  for (const char* needs : kSutNeeds)
    if (missing_for_needs(needs).empty()) kinds.emplace_back(needs);
  return kinds;
}

Result<pid_t> SutRoleLauncher::start(const json& body, const std::string& port,
                                     const std::string& address, const std::string& dir) {
  const std::string name = text_at(body, "scenario");
  const std::string sha256 = text_at(body, "sha256");
  const std::string role_name = text_at(body, "role");
  const SutScenario* scenario = own_scenario(name);
  if (scenario == nullptr) {
    return Error{ErrorCode::kInvalidArgument,
                 "no SUT scenario \"" + name + "\" among this agent's (" + from_ + ")"};
  }
  if (scenario->sha256 != sha256) {
    return Error{ErrorCode::kInvalidArgument,
                 "this agent's copy of " + name + " (" + scenario->file + ", sha256 " +
                     scenario->sha256.substr(0, 12) + ") differs from the coordinator's (" +
                     sha256.substr(0, 12) + ")"};
  }
  const auto role = std::find_if(scenario->roles.begin(), scenario->roles.end(),
                                 [&](const SutRole& own) { return own.name == role_name; });
  if (role == scenario->roles.end())
    return Error{ErrorCode::kInvalidArgument, name + " has no role \"" + role_name + "\""};
  const Placeholders values = local_placeholders(scenario->needs, faultline_binary_, port, address);
  return start_role(role_launch(*scenario, *role, values, faultline_binary_, dir));
}

std::string SutRoleLauncher::first_role_address(const json& body,
                                                const std::string& agent_address) const {
  const SutScenario* scenario = own_scenario(text_at(body, "scenario"));
  return scenario == nullptr ? agent_address
                             : sut::first_role_address(local_placeholders(
                                   scenario->needs, faultline_binary_, "", agent_address));
}

const SutScenario* SutRoleLauncher::own_scenario(const std::string& name) const {
  const auto found = std::find_if(scenarios_.begin(), scenarios_.end(),
                                  [&](const SutScenario& own) { return own.name == name; });
  return found == scenarios_.end() ? nullptr : &*found;
}

json SutRoleLauncher::summary(const std::string& dir) { return read_role_summary(dir); }

}  // namespace faultline::harness::sut
