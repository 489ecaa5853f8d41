#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "faultline/harness/base/labels.hpp"
#include "faultline/harness/control/program_jobs.hpp"
#include "faultline/transports/target.hpp"

namespace faultline::harness {

/// What an agent learns of its host from the layers above the control plane (harness/devices).
class AgentHost {
 public:
  virtual ~AgentHost() = default;
  /// The devices of `transport`, told to the coordinator as the agent joins.
  virtual nlohmann::json devices(const std::string& transport) const = 0;
  /// The target to use when --device was left out, from this host's end of the connection to
  /// the coordinator; `why` says what was chosen and from what, for the agent's log.
  virtual transports::Target target_toward(const transports::Target& asked,
                                           const std::string& local_address,
                                           std::string& why) const = 0;
};

struct AgentOptions {
  std::string coordinator;  ///< HOST:PORT
  std::string token;
  /// Its device, when empty, is the one that reaches the coordinator (agent_device.hpp).
  transports::Target target;
  /// How the agent is named in reports: its --name, or the host name; the coordinator makes
  /// names unique ("node7", "node7-2").
  std::string name;
  /// Its --rail label: with --pairs rail, agents pair only with agents of the same rail.
  std::string rail;
  /// Its --switch label: the switch its NIC hangs off, for the monitor to name when the
  /// agents under one switch fail together.
  std::string switch_label;
  /// --reconnect: when the coordinator goes away (a monitor restarting) or refuses for lack of
  /// a place, keep trying to join it, with backoff up to 5 s; a wrong token still ends it.
  bool reconnect = false;
  /// --fault-file: faults this agent applies to its side of every scenario, read before each
  /// one (agent_faults.hpp); empty: none.
  std::string fault_file;
  /// How long to keep trying to reach the coordinator (exponential backoff from 100 ms).
  std::chrono::milliseconds connect_budget = std::chrono::seconds(10);
  /// How long each message of the handshake may take to arrive.
  std::chrono::milliseconds handshake_timeout = std::chrono::seconds(10);
  /// The faultline binary, re-executed as `scenario-child` for every scenario.
  std::string executable;
  /// Serve Prometheus metrics here ("PORT" or "ADDR:PORT"; empty: none), and for how long
  /// after the coordinator says shutdown, so a last scrape sees the final counts.
  std::string metrics_listen;
  std::chrono::seconds metrics_linger{0};
  /// Its devices and the device toward the coordinator; none: no devices listed, the target as
  /// asked.
  std::shared_ptr<const AgentHost> host;
  /// The program jobs it runs (SUT scenarios' roles); none: it runs no program.
  std::shared_ptr<JobLauncher> programs;
};

/// Runs an agent: connects (with bounded retries), authenticates, reports its host and
/// devices, and runs each assigned scenario in a child process until the coordinator says
/// shutdown. Returns the process exit code (0 after shutdown, 2 when the coordinator cannot
/// be reached or refuses the token, 3 when the coordinator is lost; with `reconnect` only a
/// shutdown or a wrong token ends it). Messages go to stderr.
int run_agent(const AgentOptions& options);

}  // namespace faultline::harness
