#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/sut/sut_scenario.hpp"

namespace faultline::harness::sut {

/// One role of a SUT scenario as it is started on a machine (by `sut run` or by an agent).
struct RoleLaunch {
  std::string faultline_binary;      ///< runs it as `faultline sut exec`
  std::string dir;                   ///< its plan.json, sut.json, faults.jsonl, sut-exec.log
  std::vector<std::string> command;  ///< placeholders already expanded
  nlohmann::json faults = nlohmann::json::array();
  nlohmann::json with = nlohmann::json::array();  ///< its standing faults
  double deadline_seconds = 30;
  Checker checker;  ///< the judged role's; empty for the others
  bool judged = false;
  /// A sweep scenario's `faultline sut sweep` options: the role runs under the sweep (its
  /// report in DIR, its outcome in DIR/sut.json as a role's) instead of once.
  std::optional<std::vector<std::string>> sweep;
  double quiet_seconds = 0;  ///< sut exec --quiet-limit (0: the deadline alone)
};

/// The launch of `role` of `scenario` on this machine, its placeholders `values`.
RoleLaunch role_launch(const SutScenario& scenario, const SutRole& role, const Placeholders& values,
                       std::string faultline_binary, std::string dir);

/// Starts `faultline sut exec` (or `sut sweep`) for the role (its own process group, its output
/// in DIR/sut-exec.log); SIGTERM to the returned pid stops it the way a deadline does.
Result<pid_t> start_role(const RoleLaunch& launch);

/// The sut.json `sut exec` wrote into `dir`, whole (null when there is none).
nlohmann::json read_sut_json(const std::string& dir);

/// The role's sut.json as the report holds it (role_summary), once `sut exec` ended.
nlohmann::json read_role_summary(const std::string& dir);

/// The placeholders of this machine for a scenario that `needs` ofi, verbs or mpi: `port` and
/// `address` as given, the verbs device and its IPv4 GID index, the binary's directory.
Placeholders local_placeholders(const std::string& needs, const std::string& faultline_binary,
                                std::string port, std::string address);

/// Where the other roles reach the first one (`{address}`), from this machine's placeholders:
/// for a scenario over verbs its device's IPv4 address (rdma_cm connects there, and the network
/// the agents talk over may be another); otherwise, or with no such address, `here.address`.
std::string first_role_address(const Placeholders& here);

}  // namespace faultline::harness::sut
