#pragma once

// Program jobs: what a coordinator places on its agents besides scenario sides. A job is a list
// of roles, each one program an agent runs. What a role runs is its body, which the control
// plane carries and never reads: the agent's JobLauncher does (harness/sut's, for SUT
// scenarios).

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::harness {

/// One program job as the coordinator places it: role i on live agent i mod n, so a server and
/// its client land on two hosts; the first role's port and address go to the later ones.
struct ProgramJob {
  struct Role {
    std::string name;
    uint32_t after_ms = 0;  ///< started this long after the role before it
    nlohmann::json body;    ///< for the agent's launcher
    bool listens = false;   ///< the later roles start once it listens on its TCP port
  };
  std::string name;  ///< for messages and the agents' folders
  std::string kind;  ///< what an agent must offer to run it ("ofi", "verbs", "mpi")
  std::vector<Role> roles;
  std::string judged;            ///< the role whose end ends the job
  double deadline_seconds = 30;  ///< of the judged role
  double grace_seconds = 0;      ///< what the others get after it, before they are stopped
};

/// How a program job ended, as its agents told it: each summary is peer data the caller checks.
struct ProgramJobOutcome {
  std::string unplaced_result;  ///< "skip" or "error" when the roles could not be placed, or ""
  std::string unplaced_reason;
  std::map<std::string, std::string> agents;        ///< role -> name of the agent it ran on
  std::map<std::string, nlohmann::json> summaries;  ///< role -> what its agent sent
  std::map<std::string, std::string> errors;        ///< role -> why it has no summary
  double seconds = 0;
};

/// What the first role's agent tells the others of it (`program_started`, then `run_program`'s
/// `values`): a TCP port and an address, typed. They reach a program's argument vector through
/// its placeholders, so neither may hold anything but a port number and a host address.
struct ProgramValues {
  uint16_t port = 0;
  std::string address;
  nlohmann::json to_json() const { return {{"port", port}, {"address", address}}; }
};

/// The values of a `run_program` or `program_started` message, checked: `port` a whole number
/// from 1 to 65535, `address` an IP address or a host name (is_host_address). An error names
/// the field, what it held (printable) and what was expected.
Result<ProgramValues> program_values_from(const nlohmann::json& values);

/// An agent's side of program jobs: starts the roles placed on it. An agent without one runs
/// none (it offers no kinds).
class JobLauncher {
 public:
  virtual ~JobLauncher() = default;
  /// The kinds of jobs this host can run, told to the coordinator as it joins.
  virtual std::vector<std::string> kinds() const = 0;
  /// Starts the role `body` describes in `dir` (made, private to this user). `port` and
  /// `address`: the first role's, chosen on its host. Returns its process, which the agent
  /// waits for and stops with SIGTERM.
  virtual Result<pid_t> start(const nlohmann::json& body, const std::string& port,
                              const std::string& address, const std::string& dir) = 0;
  /// The address the first role of `body`'s job gives the others as its own, where this
  /// agent's is `agent_address`.
  virtual std::string first_role_address(const nlohmann::json& body,
                                         const std::string& agent_address) const {
    (void)body;
    return agent_address;
  }
  /// What the role left in `dir` once its process ended, for the coordinator.
  virtual nlohmann::json summary(const std::string& dir) = 0;
};

}  // namespace faultline::harness
