#include "faultline/harness/runs/local_run.hpp"

#include "faultline/harness/base/process.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "faultline/harness/control/auth.hpp"
#include "faultline/harness/runs/suite_runner.hpp"

namespace faultline::harness {

namespace {

using namespace std::chrono_literals;

// An agent process of this binary; the token travels in its environment, never on a command
// line that `ps` shows.
pid_t start_agent(const std::string& executable, const std::string& address,
                  const std::string& token, const transports::Target& target) {
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

}  // namespace

Result<std::unique_ptr<LocalAgents>> LocalAgents::start(LocalRun run,
                                                        const transports::Target& target) {
  if (run.options.listen.empty() || run.remote_agents == 0) run.options.listen = "127.0.0.1:0";
  if (run.options.token.empty()) run.options.token = control::make_token();
  run.options.agents = run.agents + run.remote_agents;
  std::unique_ptr<LocalAgents> agents(new LocalAgents(run.options));
  FAULTLINE_RETURN_IF_ERROR(agents->coordinator_.listen());
  const std::string executable = own_executable();
  // Local agents dial the listening address, or loopback when it listens on every address.
  std::string host = run.options.listen.substr(0, run.options.listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]") host = "127.0.0.1";
  const std::string address = host + ":" + std::to_string(agents->coordinator_.port());
  for (size_t i = 0; i < run.agents; ++i) {
    const pid_t pid = start_agent(executable, address, run.options.token, target);
    if (pid > 0) agents->children_.push_back(pid);
  }
  FAULTLINE_RETURN_IF_ERROR(agents->coordinator_.wait_for_agents(run.join_timeout));
  return agents;
}

LocalAgents::~LocalAgents() {
  coordinator_.shutdown_agents();
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  for (pid_t pid : children_) {
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

int LocalAgents::run(const std::vector<ScenarioSpec>& scenarios, const std::string& report_dir,
                     const RunMetadata& metadata, std::ostream& out, reports::Metrics* metrics) {
  return run_suite(coordinator_, scenarios, report_dir, metadata, out, metrics);
}

}  // namespace faultline::harness
