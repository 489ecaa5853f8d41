// The control plane under test from a scenario (docs/failures.md row 19): control.join joins
// the run's coordinator, or an address that is wrong, the way a misconfigured agent would, and
// checks that what it is told is clear, names what was tried, and comes within its budget.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "devices/agent_device.hpp"
#include "faultline/harness/control/agent_join.hpp"
#include "faultline/harness/control/auth.hpp"
#include "faultline/harness/scenario/step_ops.hpp"

namespace faultline::harness {

namespace {

using nlohmann::json;

// A TCP socket bound to 127.0.0.1 on a free port; listening when `listen_on` (it accepts
// nothing: the kernel completes connections that then hear nothing).
struct LocalSocket {
  int fd = -1;
  int port = 0;
  explicit LocalSocket(bool listen_on) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
        (listen_on && listen(fd, 4) != 0)) {
      return;
    }
    port = ntohs(address.sin_port);
  }
  ~LocalSocket() {
    if (fd >= 0) close(fd);
  }
  LocalSocket(const LocalSocket&) = delete;
  LocalSocket& operator=(const LocalSocket&) = delete;
};

StepResult control_join(StepState& /*state*/, const json& step) {
  const std::string wrong = step.at("misconfigure");
  const auto budget = std::chrono::milliseconds(step.value("budget_ms", 1000));
  AgentOptions options;
  options.token = control::kScenarioWrongToken;
  options.connect_budget = budget;
  options.handshake_timeout = budget;
  // The join's own device is beside the point: named, and the host's devices listed before the
  // clock starts, so that no device discovery (libfabric's first start-up, seconds under the
  // Soft-RoCE guest's emulation) counts against the budget.
  options.target = {"ofi", "tcp", "lo"};
  options.host = std::make_shared<DeviceHost>();
  std::optional<LocalSocket> local;
  if (wrong == "token") {
    const char* coordinator = std::getenv(kCoordinatorEnv);
    if (coordinator == nullptr) {
      return broken(std::string("control.join needs the coordinator's address in ") +
                    kCoordinatorEnv + ", which an agent sets for its scenarios");
    }
    options.coordinator = coordinator;
  } else {
    local.emplace(wrong == "silent_coordinator");
    if (local->port == 0) return broken("control.join: no free port on 127.0.0.1");
    if (wrong == "address") {  // nothing listens there once the socket is gone
      close(local->fd);
      local->fd = -1;
    }
    options.coordinator = "127.0.0.1:" + std::to_string(local->port);
  }
  const HostFacts facts = gather_host_facts(options);
  const auto start = std::chrono::steady_clock::now();
  auto attempt = join_coordinator(options, facts);
  const Status joined = attempt.ok() ? Status{} : Status{attempt.error()};
  const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  const std::string took = "after " + std::to_string(spent.count()) + " ms";
  // Within its budget, with a second for the last attempt and the answer.
  const auto allowed = budget + std::chrono::seconds(1);
  if (spent > allowed) {
    return failed(
        "a join with a wrong " + wrong + " ends within " + std::to_string(allowed.count()) + " ms",
        took + (joined.ok() ? "" : ": " + joined.error().describe()));
  }
  StepResult result = judge_status(step, joined, "control.join to " + options.coordinator, "");
  if (result.met) result.note += " (" + took + ")";
  return result;
}

}  // namespace

void add_control_ops(StepOps& ops) { ops["control.join"] = {control_join, {}}; }

}  // namespace faultline::harness
