#include "faultline/harness/runs/local_run.hpp"

#include "faultline/harness/base/process.hpp"

#include <fcntl.h>
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

// An agent process of this binary. The token travels through a pipe it reads as its token file
// (fd 3, as /proc/self/fd/3: a minimal system has /proc but no /dev/fd), never on a command line
// `ps` shows nor in an environment /proc shows.
pid_t start_agent(const std::string& executable, const std::string& address,
                  const std::string& token, const transports::Target& target,
                  const std::string& name) {
  int token_pipe[2];
  if (::pipe2(token_pipe, O_CLOEXEC) != 0) return -1;
  // Far below a pipe's buffer: written whole before the agent reads it.
  const bool written =
      ::write(token_pipe[1], token.data(), token.size()) == static_cast<ssize_t>(token.size());
  ::close(token_pipe[1]);
  const pid_t pid = written ? fork() : -1;
  if (pid != 0) {
    ::close(token_pipe[0]);
    return pid;
  }
  if (token_pipe[0] == 3) {
    ::fcntl(3, F_SETFD, 0);  // kept across exec
  } else {
    dup2(token_pipe[0], 3);  // a duplicate is kept across exec
  }
  std::vector<std::string> args = {
      "faultline",      "agent",        "--coordinator",   address,  "--transport",
      target.transport, "--token-file", "/proc/self/fd/3", "--name", name};
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
    // Named by their place, not the host: the same names on every machine and every run.
    const pid_t pid = start_agent(executable, address, run.options.token, target,
                                  "local-" + std::to_string(i + 1));
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
