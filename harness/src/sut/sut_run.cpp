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

// One attempt: the roles' folders under `dir` (DIR/<role>).
Result<ScenarioOutcome> attempt(const SutScenario& scenario, const SutRunSettings& settings,
                                const std::string& dir) {
  ScenarioOutcome outcome = ScenarioOutcome::of(scenario);
  Placeholders values =
      local_placeholders(scenario.needs, settings.faultline_binary, free_local_port(), "127.0.0.1");
  values.address = first_role_address(values);
  const auto started = Clock::now();
  std::vector<RunningRole> roles;
  for (const auto& role : scenario.roles) {
    if (role.after_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(role.after_ms));
    const std::string role_dir = dir + "/" + role.name;
    auto pid = start_role(role_launch(scenario, role, values, settings.faultline_binary, role_dir));
    if (!pid.ok()) {
      end_the_others(roles, 0);
      return std::move(pid).take_error();
    }
    roles.push_back({&role, role_dir, pid.value()});
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

// The retry rule: the outcome is not what the scenario expects, and the program failed by
// itself before any fault fired: the judged role failed or crashed before any fault of its own,
// or no fault fired in any role and one of them failed or crashed (a peer that died leaves the
// judged one waiting). A clean-run failure of the program (StepMesh's flushed completion
// before its first push, about one lane run in ten, in the worker or in the server) says
// nothing about the faults; the scenario runs once more, and the first attempt stays in its
// evidence and folder. A device's smaller answer to a create that succeeded is no fault that
// fired here: it changed no operation (a post above it is refused, and that one counts).
bool failed_before_its_faults(const ScenarioOutcome& outcome) {
  if (outcome.result != "fail") return false;
  const auto applied = [](const json& role) {
    const auto count = [&role](const char* key) {
      const json value = role.value(key, json(0));
      return value.is_number() ? value.get<double>() : 0.0;
    };
    return count("faults_applied") - count("limits_lowered");
  };
  const auto failed = [](const std::string& verdict) {
    return verdict == "fail" || verdict == "crashed";
  };
  const json judged = outcome.roles.value(outcome.judged, json::object());
  if (failed(outcome.verdict) && applied(judged) == 0) return true;
  bool any_failed = false;
  for (const json& role : outcome.roles) {
    if (!role.is_object() || applied(role) > 0) return false;
    any_failed = any_failed || failed(role.value("verdict", std::string()));
  }
  return any_failed;
}

}  // namespace

Result<ScenarioOutcome> run_sut_scenario(const SutScenario& scenario,
                                         const SutRunSettings& settings) {
  if (auto missing = missing_for(scenario); !missing.empty()) {
    ScenarioOutcome outcome = ScenarioOutcome::of(scenario);
    outcome.result = "skip";
    outcome.reason = missing;
    return outcome;
  }
  const std::string dir = settings.report_dir + "/" + scenario.name;
  return run_with_retry_rule(
      scenario,
      [&](int number) { return attempt(scenario, settings, number == 0 ? dir : dir + "/retry"); },
      dir + "/ROLE");
}

Result<ScenarioOutcome> run_with_retry_rule(
    const SutScenario& scenario, const std::function<Result<ScenarioOutcome>(int)>& attempt,
    const std::string& first_folders) {
  auto first = attempt(0);
  if (!first.ok() || !failed_before_its_faults(first.value())) return first;
  auto second = attempt(1);
  if (!second.ok()) return second;
  second->first_attempt = first->reason + " (before any fault of " + scenario.judged +
                          "'s fired: run once more; its folders are " + first_folders + ")";
  second->seconds += first->seconds;
  return second;
}

}  // namespace faultline::harness::sut
