#include "faultline/harness/sut/sut_run.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "faultline/harness/base/net_address.hpp"
#include "faultline/harness/base/port_listening.hpp"
#include "faultline/harness/sut/sut_exec.hpp"
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

// The faults that acted in a role: those fired, less a device's smaller answers to creates that
// succeeded (they changed no operation; a post refused above one is its own event and counts).
double faults_acted(const json& summary) {
  const auto count = [&summary](const char* key) {
    const json value = summary.value(key, json(0));
    return value.is_number() ? value.get<double>() : 0.0;
  };
  return count("faults_applied") - count("limits_lowered");
}

bool failed(const std::string& verdict) { return verdict == "fail" || verdict == "crashed"; }

// Waits for the judged role. A role that fails by itself before then, no fault having acted in
// any role (StepMesh's worker aborting on a flushed completion before its first push), leaves
// the others waiting for it to their deadline, and this attempt says nothing about the faults:
// it ends there, and the role's name comes back.
std::string wait_for_judged(std::vector<RunningRole>& roles, const std::string& judged) {
  std::vector<bool> looked_at(roles.size(), false);
  for (;;) {
    for (size_t i = 0; i < roles.size(); ++i) {
      RunningRole& running = roles[i];
      if (!reap(running, false)) continue;
      if (running.role->name == judged) return "";
      if (looked_at[i]) continue;
      looked_at[i] = true;
      const json summary = read_role_summary(running.dir);
      if (!failed(summary.value("verdict", std::string())) || faults_acted(summary) > 0) continue;
      const bool none_acted = std::none_of(roles.begin(), roles.end(), [](const RunningRole& r) {
        return faults_acted_so_far(r.dir) > 0;
      });
      if (none_acted) return running.role->name;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
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
  const std::string failed_by_itself = wait_for_judged(roles, scenario.judged);
  end_the_others(roles, failed_by_itself.empty() ? scenario.grace_seconds : 0);
  outcome.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  for (const auto& running : roles) {
    json summary = read_role_summary(running.dir);
    summary["agent"] = "local";
    outcome.roles[running.role->name] = std::move(summary);
  }
  outcome.judge();
  if (!failed_by_itself.empty()) {
    outcome.result = "fail";
    outcome.failed_by_itself = true;
    outcome.reason = failed_by_itself + " failed by itself, no fault having acted in any role: " +
                     "the attempt ended there (" +
                     outcome.roles.at(failed_by_itself).value("evidence", std::string()) + ")";
  }
  return outcome;
}

// The retry rule: the outcome is not what the scenario expects, and the program failed by
// itself before any fault acted: the judged role failed or crashed before any fault of its own,
// or none acted in any role (a peer that died leaves the judged one waiting, and `sut run` ends
// such an attempt at once; StepMesh's three ranks also hang by themselves while connecting,
// about one loaded lane run in fifteen). A clean-run failure of the program (StepMesh's flushed
// completion before its first push, about one lane run in ten, in the worker or in the server)
// says nothing about the faults; the scenario runs again, and each earlier attempt stays in its
// evidence and folder.
bool failed_before_its_faults(const ScenarioOutcome& outcome) {
  if (outcome.result != "fail") return false;
  if (outcome.failed_by_itself) return true;
  const json judged = outcome.roles.value(outcome.judged, json::object());
  if (failed(outcome.verdict) && faults_acted(judged) == 0) return true;
  return std::none_of(outcome.roles.begin(), outcome.roles.end(),
                      [](const json& role) { return !role.is_object() || faults_acted(role) > 0; });
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
      [&](int number) { return attempt(scenario, settings, attempt_folder(dir, number)); },
      [&](int number) { return attempt_folder(dir, number) + "/ROLE"; });
}

std::string attempt_folder(const std::string& dir, int number) {
  if (number == 0) return dir;
  return dir + "/retry" + (number == 1 ? "" : "-" + std::to_string(number));
}

Result<ScenarioOutcome> run_with_retry_rule(
    const SutScenario& scenario, const std::function<Result<ScenarioOutcome>(int)>& attempt,
    const std::function<std::string(int)>& folders) {
  std::string earlier;
  double seconds = 0;
  for (int number = 0;; ++number) {
    auto outcome = attempt(number);
    if (!outcome.ok()) return outcome;
    outcome->seconds += seconds;
    outcome->first_attempt = earlier;
    if (number + 1 == kAttempts || !failed_before_its_faults(outcome.value())) return outcome;
    if (!earlier.empty()) earlier += "; attempt " + std::to_string(number + 1) + ": ";
    earlier += outcome->reason + " (before any fault of " + scenario.judged +
               "'s acted: run again; its folders are " + folders(number) + ")";
    seconds = outcome->seconds;
  }
}

}  // namespace faultline::harness::sut
