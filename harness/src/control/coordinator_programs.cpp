// The coordinator's SUT scenarios: each role on an agent (role i on live agent i mod n, so a
// server and its client land on two hosts, a launcher on one), the first role's port and
// address handed to the others, the judged role awaited, the others given the grace period
// and then stopped, every role's summary into the scenario's outcome.
#include <algorithm>
#include <set>

#include "faultline/harness/base/strict_json.hpp"
#include "faultline/harness/control/coordinator.hpp"

namespace faultline::harness {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

// How long a role's agent may take to start it, and stopped roles to report back.
constexpr auto kStartBudget = 15s;
constexpr auto kStopBudget = 30s;  // `sut exec` takes every process's stacks with gdb

json error_summary(const std::string& agent, const std::string& why) {
  return {{"verdict", "error"},
          {"seconds", 0},
          {"faults_applied", 0},
          {"evidence", why},
          {"agent", agent}};
}

bool offers(const AgentRecord& agent, const std::string& needs) {
  const json kinds = agent.hello.value("programs", json::array());
  return kinds.is_array() && std::find(kinds.begin(), kinds.end(), needs) != kinds.end();
}

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

struct Quiet : RunObserver {};

}  // namespace

struct Coordinator::ProgramRun {
  const sut::SutScenario& scenario;
  sut::ScenarioOutcome outcome;
  uint64_t run_id = 0;
  std::map<std::string, std::string> placed;  // role -> agent
  json values = json::object();               // the first role's port and address
  std::set<std::string> running;              // started, no result yet
};

sut::ScenarioOutcome Coordinator::run_programs(const sut::SutScenario& scenario) {
  ProgramRun run{scenario,
                 {scenario.name, scenario.file, scenario.sha256, scenario.expect, scenario.judged}};
  for (const auto& role : scenario.roles) run.outcome.role_names.push_back(role.name);
  if (!place_roles(run)) return run.outcome;
  run.run_id = next_run_id_++;
  const auto started = Clock::now();
  start_roles(run);
  // The judged role ends within its deadline (sut exec stops it there and takes its stacks).
  wait_programs(
      run, [&] { return !run.running.contains(scenario.judged); },
      after(scenario.deadline_seconds) + kStopBudget);
  wait_programs(
      run, [&] { return run.running.empty(); }, after(scenario.grace_seconds));
  std::set<std::string> told;
  for (const auto& role : run.running) {
    if (told.insert(run.placed.at(role)).second)
      send_to(run.placed.at(role), "abort_scenario", {{"run_id", run.run_id}});
  }
  wait_programs(
      run, [&] { return run.running.empty(); }, Clock::now() + kStopBudget);
  for (const auto& role : scenario.roles) {
    if (run.outcome.roles.contains(role.name)) continue;
    const std::string& agent_id = run.placed.at(role.name);
    run.outcome.roles[role.name] = error_summary(
        agent_id, run.running.contains(role.name) ? "no result from " + agent_id + " for it"
                                                  : "not started: the first role did not start");
  }
  run.outcome.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  run.outcome.judge();
  return run.outcome;
}

bool Coordinator::place_roles(ProgramRun& run) {
  std::vector<std::string> live;
  for (const auto& record : agents_)
    if (!record.lost) live.push_back(record.id);
  if (live.empty()) {
    run.outcome.result = "error";
    run.outcome.reason = "no agent is left to run its programs";
    return false;
  }
  for (size_t i = 0; i < run.scenario.roles.size(); ++i) {
    const AgentRecord& record = *agent(live[i % live.size()]);
    run.placed[run.scenario.roles[i].name] = record.id;
    if (!offers(record, run.scenario.needs)) {
      run.outcome.result = "skip";
      run.outcome.reason =
          record.id + " (host " + record.host + ") cannot run " + run.scenario.needs + " programs";
      return false;
    }
  }
  return true;
}

void Coordinator::start_roles(ProgramRun& run) {
  const sut::SutScenario& scenario = run.scenario;
  for (size_t i = 0; i < scenario.roles.size(); ++i) {
    const sut::SutRole& role = scenario.roles[i];
    if (role.after_ms > 0) {
      wait_programs(
          run, [] { return false; }, Clock::now() + std::chrono::milliseconds(role.after_ms));
    }
    const bool judged = role.name == scenario.judged;
    const json checker = judged ? json{{"ok", scenario.checker.ok},
                                       {"wrong", scenario.checker.wrong},
                                       {"error", scenario.checker.error}}
                                : json::object();
    send_to(run.placed.at(role.name), "run_program",
            {{"run_id", run.run_id},
             {"scenario", scenario.name},
             {"role", role.name},
             {"needs", scenario.needs},
             {"command", role.command},
             {"faults", role.faults},
             {"deadline_ms", static_cast<uint64_t>(scenario.deadline_seconds * 1000)},
             {"checker", checker},
             {"values", run.values}});
    run.running.insert(role.name);
    // The others need the first one's port and address; without them there is no one to
    // talk to.
    if (i == 0) {
      wait_programs(
          run, [&] { return !run.values.empty() || !run.running.contains(role.name); },
          Clock::now() + kStartBudget);
      if (run.values.empty()) return;
    }
  }
}

bool Coordinator::wait_programs(ProgramRun& run, const std::function<bool()>& done,
                                Clock::time_point until) {
  Quiet quiet;
  while (!done() && Clock::now() < until) {
    if (auto event = events_.pop(100ms)) {
      const bool ours = event->kind == EventKind::kMessage && event->message.contains("role") &&
                        event->message.value("run_id", json()) == run.run_id;
      AgentRecord* record = agent(event->agent_id);
      if (ours && record != nullptr && !record->lost) {
        record->last_seen = Clock::now();
        take_program_message(run, event->agent_id, event->message);
      } else {
        handle(*event, quiet);
      }
    }
    check_deadlines(quiet);
    for (auto it = run.running.begin(); it != run.running.end();) {
      const AgentRecord* record = agent(run.placed.at(*it));
      if (record == nullptr || !record->lost) {
        ++it;
        continue;
      }
      run.outcome.roles[*it] =
          error_summary(record->id, record->id + " lost: " + record->lost_reason);
      it = run.running.erase(it);
    }
  }
  return done();
}

void Coordinator::take_program_message(ProgramRun& run, const std::string& agent_id,
                                       const json& message) {
  const std::string role = message.at("role");
  if (!run.placed.contains(role) || run.placed.at(role) != agent_id) return;
  if (message.at("type") == "program_started") {
    if (role == run.scenario.roles.front().name && run.values.empty()) {
      const json& given = message.at("values");
      run.values = {{"port", text_at(given, "port")}, {"address", text_at(given, "address")}};
    }
  } else if (message.at("type") == "program_result" && run.running.erase(role) == 1) {
    // Checked as any peer data: only the report schema's values come out.
    const json& sent = message.at("summary");
    json summary = sut::role_summary(sent, text_at(sent, "log"));
    summary["agent"] = agent_id;
    run.outcome.roles[role] = std::move(summary);
  }
}

}  // namespace faultline::harness
