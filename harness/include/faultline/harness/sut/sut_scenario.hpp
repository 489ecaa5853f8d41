#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/sut/sut_exec.hpp"

namespace faultline::harness::sut {

/// One program of a SUT scenario: a server, a client, or a launcher (mpirun) that starts the
/// ranks itself.
struct SutRole {
  std::string name;
  std::vector<std::string> command;  ///< with {port}, {address}, {device}, {gid}, {bin}
  nlohmann::json faults = nlohmann::json::array();  ///< the plan's faults for this role
  int after_ms = 0;                                 ///< started this long after the role before it
  /// Its {port} is a port it listens on (TCP, or rdma_cm on an RDMA device): the roles after it
  /// start once it does (at most the deadline later), not after a guessed delay that a busy
  /// host outlasts.
  bool listens = false;
  /// Its standing faults: the conditions it runs under (inline off), not the faults judged.
  nlohmann::json with = nlohmann::json::array();
};

/// A system-under-test scenario (scenarios/sut/*.json): programs, their faults, a checker,
/// and the verdict the judged role is expected to reach.
struct SutScenario {
  std::string file;
  std::string sha256;  ///< of the file's bytes
  std::string name;
  std::string description;
  std::string needs;  ///< one of kSutNeeds: where it can run
  std::vector<SutRole> roles;
  std::string judged;  ///< the role whose verdict is the scenario's (default: the last)
  std::string expect;  ///< the verdict that makes the scenario pass
  double deadline_seconds = 30;
  double grace_seconds = 5;  ///< how long the others may run on once the judged role ended
  Checker checker;
  /// A `sweep` block: its one role runs under `faultline sut sweep` with these options (the
  /// block's fields as the command's flags) instead of once; it passes when every point is
  /// detected, masked or allowed. nullopt: the roles run once.
  std::optional<std::vector<std::string>> sweep;
};

/// Loads and checks one scenario file; errors name the file, the field and what was expected.
Result<SutScenario> load_sut_scenario(const std::string& path);
/// The same for a file's text already read (fuzzing); `path` stands for the file.
Result<SutScenario> parse_sut_scenario(const std::string& path, const std::string& text);

/// What a scenario can need of a machine: "ofi" (libfabric), "verbs" (a device), "mpi"
/// (mpirun), "stepmesh" (StepMesh's build beside faultline, tests/sut/stepmesh/README.md) and
/// "stepmesh-verbs" (both of the last).
inline constexpr const char* kSutNeeds[] = {"ofi", "verbs", "mpi", "stepmesh", "stepmesh-verbs"};

/// Why this machine cannot run `scenario` (no verbs device, no mpirun), or "" when it can.
std::string missing_for(const SutScenario& scenario);
/// The same for a kind of program, one of kSutNeeds.
std::string missing_for_needs(const std::string& needs);

/// The values of the command placeholders on this machine.
struct Placeholders {
  std::string port;
  std::string address = "127.0.0.1";
  std::string device;
  std::string gid;
  std::string bin;  ///< the directory of the faultline binary (its build tree's programs)
  /// The device's IPv4 address (its GID at `gid`) and the network interface carrying it:
  /// where rdma_cm programs bind and what they are told to use (StepMesh's DMLC_NODE_HOST and
  /// DMLC_INTERFACE).
  std::string device_address;
  std::string netdev;
};

/// $FAULTLINE_VERBS_DEVICE, or the first verbs device of this machine; "" when it has none.
std::string verbs_device();

/// The GID table entry of port 1's IPv4 address (::ffff:a.b.c.d) on a verbs device: perftest's
/// -x, the pingpongs' -g. "" when the device has none.
std::string ipv4_gid_index(const std::string& device);

/// The IPv4 address (a.b.c.d) and network interface of `device`'s GID `index` on port 1;
/// empty strings when it has none.
std::pair<std::string, std::string> gid_address_and_netdev(const std::string& device,
                                                           const std::string& index);

/// `command` with every {name} replaced.
std::vector<std::string> expand(const std::vector<std::string>& command,
                                const Placeholders& values);

}  // namespace faultline::harness::sut
