#include "faultline/harness/sut/sut_run.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include "faultline/harness/base/net_address.hpp"
#include "faultline/harness/base/port_listening.hpp"
#include "faultline/harness/sut/sut_role.hpp"

namespace faultline::harness::sut {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct RunningRole {
  const SutRole* role = nullptr;
  std::string dir;
  pid_t pid = -1;
  bool ended = false;
};

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
  const Placeholders values =
      local_placeholders(scenario.needs, settings.faultline_binary, free_local_port(), "127.0.0.1");
  const auto started = Clock::now();
  std::vector<RunningRole> roles;
  for (const auto& role : scenario.roles) {
    if (role.after_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(role.after_ms));
    const std::string dir = settings.report_dir + "/" + scenario.name + "/" + role.name;
    auto pid = start_role(role_launch(scenario, role, values, settings.faultline_binary, dir));
    if (!pid.ok()) {
      end_the_others(roles, 0);
      return std::move(pid).take_error();
    }
    roles.push_back({&role, dir, pid.value()});
    if (role.listens)
      wait_until_listening(pid.value(), values.port,
                           started + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(scenario.deadline_seconds)));
  }
  for (auto& running : roles)
    if (running.role->name == scenario.judged) reap(running, true);
  end_the_others(roles, scenario.grace_seconds);
  outcome.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  for (const auto& running : roles) {
    json summary = read_role_summary(running.dir);
    summary["agent"] = "local";
    outcome.roles[running.role->name] = std::move(summary);
  }
  outcome.judge();
  return outcome;
}

}  // namespace faultline::harness::sut
