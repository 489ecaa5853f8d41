#include "faultline/harness/sut/sut_run.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "faultline/reports/atomic_file.hpp"

extern char** environ;

namespace faultline::harness::sut {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A TCP port on 127.0.0.1 nothing listens on now (the programs' own out-of-band exchange).
std::string free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  if (fd >= 0) ::close(fd);
  return std::to_string(port);
}

struct RunningRole {
  const SutRole* role = nullptr;
  std::string dir;
  pid_t pid = -1;
  bool ended = false;
};

Result<pid_t> start_role(const SutScenario& scenario, const SutRole& role, const std::string& dir,
                         const Placeholders& values, const std::string& binary) {
  std::filesystem::create_directories(dir);
  const std::string plan = dir + "/plan.json";
  if (auto written = reports::write_file_atomically(plan, json({{"faults", role.faults}}).dump());
      !written.ok())
    return std::move(written).take_error();
  std::vector<std::string> args = {
      binary,         "sut",        "exec",
      "--report-dir", dir,          "--plan",
      plan,           "--deadline", std::to_string(scenario.deadline_seconds)};
  if (role.name == scenario.judged) {
    for (auto [flag, pattern] :
         {std::pair{"--ok", &scenario.checker.ok}, std::pair{"--wrong", &scenario.checker.wrong},
          std::pair{"--error", &scenario.checker.error}}) {
      if (!pattern->empty()) args.insert(args.end(), {flag, *pattern});
    }
  }
  args.emplace_back("--");
  for (auto& argument : expand(role.command, values)) args.push_back(std::move(argument));
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& argument : args) argv.push_back(argument.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = dir + "/sut-exec.log";
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    return errno_error("posix_spawn", spawned, binary + " sut exec for " + role.name);
  return pid;
}

bool reap(RunningRole& running, bool block) {
  if (running.ended || running.pid < 0) return true;
  running.ended = waitpid(running.pid, nullptr, block ? 0 : WNOHANG) == running.pid;
  return running.ended;
}

// The others get the grace period once the judged role has ended, then SIGTERM: `sut exec`
// takes their stacks, judges them (a hang: still waiting) and writes their report.
void end_the_others(std::vector<RunningRole>& roles, double grace_seconds) {
  const auto until = Clock::now() + std::chrono::duration<double>(grace_seconds);
  for (bool all = false; !all && Clock::now() < until;) {
    all = true;
    for (auto& running : roles) all = reap(running, false) && all;
    if (!all) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (auto& running : roles)
    if (!reap(running, false)) kill(running.pid, SIGTERM);
  for (auto& running : roles) reap(running, true);
}

}  // namespace

Result<ScenarioOutcome> run_sut_scenario(const SutScenario& scenario,
                                         const SutRunSettings& settings) {
  ScenarioOutcome outcome{scenario.name, scenario.file, scenario.sha256, scenario.expect,
                          scenario.judged};
  for (const auto& role : scenario.roles) outcome.role_names.push_back(role.name);
  if (auto missing = missing_for(scenario); !missing.empty()) {
    outcome.result = "skip";
    outcome.reason = missing;
    return outcome;
  }
  Placeholders values;
  values.port = free_port();
  values.bin = std::filesystem::path(settings.faultline_binary).parent_path().string();
  if (scenario.needs == "verbs") {
    values.device = verbs_device();
    if (!values.device.empty()) values.gid = ipv4_gid_index(values.device);
  }
  const auto started = Clock::now();
  std::vector<RunningRole> roles;
  for (const auto& role : scenario.roles) {
    if (role.after_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(role.after_ms));
    const std::string dir = settings.report_dir + "/" + scenario.name + "/" + role.name;
    auto pid = start_role(scenario, role, dir, values, settings.faultline_binary);
    if (!pid.ok()) {
      end_the_others(roles, 0);
      return std::move(pid).take_error();
    }
    roles.push_back({&role, dir, pid.value()});
  }
  for (auto& running : roles)
    if (running.role->name == scenario.judged) reap(running, true);
  end_the_others(roles, scenario.grace_seconds);
  outcome.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  for (const auto& running : roles) {
    std::ifstream file(running.dir + "/sut.json");
    outcome.roles[running.role->name] =
        role_summary(json::parse(file, nullptr, false), running.dir);
  }
  const json& judged = outcome.roles[scenario.judged];
  outcome.verdict = judged.at("verdict");
  if (outcome.verdict == "error") {
    outcome.result = "error";
    outcome.reason = judged.value("evidence", std::string());
  } else {
    outcome.result = outcome.verdict == scenario.expect ? "pass" : "fail";
    if (outcome.result == "fail") {
      outcome.reason = "expected " + scenario.expect + ", got " + outcome.verdict + ": " +
                       judged.value("evidence", std::string());
    }
  }
  return outcome;
}

}  // namespace faultline::harness::sut
