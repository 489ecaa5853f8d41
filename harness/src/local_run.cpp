#include "faultline/harness/local_run.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "faultline/harness/control/auth.hpp"
#include "faultline/harness/exit_codes.hpp"
#include "faultline/harness/suite_runner.hpp"

namespace faultline::harness {

namespace {

using namespace std::chrono_literals;

// An agent process of this binary; the token travels in its environment, never on a command
// line that `ps` shows.
pid_t start_agent(const std::string& executable, const std::string& address,
                  const std::string& token, const ScenarioTarget& target) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  setenv("FAULTLINE_TOKEN", token.c_str(), 1);
  std::vector<std::string> args = {"faultline", "agent",       "--coordinator",
                                   address,     "--transport", target.transport};
  if (!target.provider.empty()) args.insert(args.end(), {"--provider", target.provider});
  if (!target.device.empty()) args.insert(args.end(), {"--device", target.device});
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  execv(executable.c_str(), argv.data());
  _exit(127);
}

// Agents exit on shutdown; any that does not within 5 s is killed.
void reap(const std::vector<pid_t>& children) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  for (pid_t pid : children) {
    while (waitpid(pid, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(20ms);
    }
  }
}

}  // namespace

std::string own_executable() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("faultline") : path.string();
}

int run_locally(const std::string& command, LocalRun run,
                const std::vector<ScenarioSpec>& scenarios, const RunMetadata& metadata) {
  run.options.listen = "127.0.0.1:0";
  run.options.token = control::make_token();
  run.options.agents = run.agents;
  Coordinator coordinator(run.options);
  if (auto listening = coordinator.listen(); !listening.ok()) {
    std::cerr << "faultline " << command << ": " << listening.error().describe_with_hint() << "\n";
    return kExitHarnessError;
  }
  const std::string executable = own_executable();
  const std::string address = "127.0.0.1:" + std::to_string(coordinator.port());
  std::vector<pid_t> children;
  for (size_t i = 0; i < run.agents; ++i) {
    const pid_t pid = start_agent(executable, address, run.options.token, metadata.target);
    if (pid > 0) children.push_back(pid);
  }
  int code = kExitHarnessError;
  if (auto joined = coordinator.wait_for_agents(30s); !joined.ok()) {
    std::cerr << "faultline " << command << ": " << joined.error().describe_with_hint() << "\n";
  } else {
    code = run_suite(coordinator, scenarios, run.report_dir, metadata,
                     run.out != nullptr ? *run.out : std::cout, run.metrics);
  }
  coordinator.shutdown_agents();
  reap(children);
  return code;
}

}  // namespace faultline::harness
