// The coordinator's SUT scenarios: each role on an agent (role i on live agent i mod n, so a
// server and its client land on two hosts, a launcher on one), the first role's port and
// address handed to the others, the judged role awaited, the others given the grace period
// and then stopped, every role's summary into the scenario's outcome.
#include <algorithm>
#include <iostream>
#include <set>

#include "faultline/harness/control/coordinator.hpp"

namespace faultline::harness {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

// How long a role's agent may take to start it, and the stopped roles to report.
constexpr auto kStartBudget = 15s;
constexpr auto kStopBudget = 30s;  // `sut exec` takes every process's stacks with gdb

json error_summary(const std::string& agent, const std::string& why) {
  return {{"verdict", "error"},
          {"seconds", 0},
          {"faults_applied", 0},
          {"evidence", why},
          {"agent", agent}};
}

std::string text_at(const json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

bool offers(const AgentRecord& agent, const std::string& needs) {
  const json kinds = agent.hello.value("programs", json::array());
  return kinds.is_array() && std::find(kinds.begin(), kinds.end(), needs) != kinds.end();
}

}  // namespace

sut::ScenarioOutcome Coordinator::run_programs(const sut::SutScenario& scenario) {
  struct Quiet : RunObserver {
  } quiet;
  sut::ScenarioOutcome outcome{scenario.name, scenario.file, scenario.sha256, scenario.expect,
                               scenario.judged};
  for (const auto& role : scenario.roles) outcome.role_names.push_back(role.name);
  std::vector<std::string> live;
  for (const auto& record : agents_)
    if (!record.lost) live.push_back(record.id);
  if (live.empty()) {
    outcome.result = "error";
    outcome.reason = "no agent is left to run its programs";
    return outcome;
  }
  std::map<std::string, std::string> placed;  // role -> agent
  for (size_t i = 0; i < scenario.roles.size(); ++i) {
    const std::string& id = live[i % live.size()];
    placed[scenario.roles[i].name] = id;
    const AgentRecord& record = *agent(id);
    if (!offers(record, scenario.needs)) {
      outcome.result = "skip";
      outcome.reason = id + " (host " + record.host + ") cannot run " + scenario.needs +
                       " programs: " + sut::missing_for_needs(scenario.needs);
      return outcome;
    }
  }
  const uint64_t run_id = next_run_id_++;
  const auto started = Clock::now();
  json values = json::object();   // the first role's port and address, for the others
  std::set<std::string> running;  // started, no result yet
  // Processes events until `done` or `until`; a program message of this run is taken here,
  // everything else (heartbeats, joins, losses) as always.
  auto wait = [&](const std::function<bool()>& done, Clock::time_point until) {
    while (!done() && Clock::now() < until) {
      if (auto event = events_.pop(100ms)) {
        const json& message = event->message;
        const bool ours = event->kind == EventKind::kMessage && message.contains("role") &&
                          message.value("run_id", json()) == run_id;
        AgentRecord* record = agent(event->agent_id);
        if (!ours || record == nullptr || record->lost) {
          handle(*event, quiet);
        } else {
          record->last_seen = Clock::now();
          const std::string role = message.at("role");
          if (placed.contains(role) && placed.at(role) == event->agent_id) {
            if (message.at("type") == "program_started" && role == scenario.roles[0].name &&
                values.empty()) {
              const json& given = message.at("values");
              values = {{"port", text_at(given, "port")}, {"address", text_at(given, "address")}};
            } else if (message.at("type") == "program_result" && running.erase(role) == 1) {
              // Checked as any peer data: only the report schema's values come out.
              const json& sent = message.at("summary");
              json summary = sut::role_summary(sent, text_at(sent, "log"));
              summary["agent"] = event->agent_id;
              outcome.roles[role] = summary;
            }
          }
        }
      }
      check_deadlines(quiet);
      for (auto it = running.begin(); it != running.end();) {
        const AgentRecord* record = agent(placed.at(*it));
        if (record == nullptr || !record->lost) {
          ++it;
          continue;
        }
        outcome.roles[*it] =
            error_summary(record->id, record->id + " lost: " + record->lost_reason);
        it = running.erase(it);
      }
    }
    return done();
  };
  for (size_t i = 0; i < scenario.roles.size(); ++i) {
    const sut::SutRole& role = scenario.roles[i];
    if (role.after_ms > 0)
      wait([] { return false; }, Clock::now() + std::chrono::milliseconds(role.after_ms));
    const bool judged = role.name == scenario.judged;
    send_to(placed.at(role.name), "run_program",
            {{"run_id", run_id},
             {"scenario", scenario.name},
             {"role", role.name},
             {"needs", scenario.needs},
             {"command", role.command},
             {"faults", role.faults},
             {"deadline_ms", static_cast<uint64_t>(scenario.deadline_seconds * 1000)},
             {"checker", judged ? json{{"ok", scenario.checker.ok},
                                       {"wrong", scenario.checker.wrong},
                                       {"error", scenario.checker.error}}
                                : json::object()},
             {"values", values}});
    running.insert(role.name);
    if (i == 0 && !wait([&] { return !values.empty() || !running.contains(role.name); },
                        Clock::now() + kStartBudget)) {
      break;  // its agent did not start it: the others would have no one to talk to
    }
    if (i == 0 && values.empty()) break;  // it ended (could not start) before saying so
  }
  // The judged role ends within its deadline (sut exec stops it there and takes its stacks).
  const auto deadline = Clock::now() +
                        std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(scenario.deadline_seconds)) +
                        kStopBudget;
  wait([&] { return !running.contains(scenario.judged); }, deadline);
  wait([&] { return running.empty(); },
       Clock::now() + std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(scenario.grace_seconds)));
  std::set<std::string> told;
  for (const auto& role : running)
    if (told.insert(placed.at(role)).second)
      send_to(placed.at(role), "abort_scenario", {{"run_id", run_id}});
  wait([&] { return running.empty(); }, Clock::now() + kStopBudget);
  for (const auto& role : scenario.roles) {
    if (outcome.roles.contains(role.name)) continue;
    outcome.roles[role.name] = error_summary(
        placed.at(role.name), running.contains(role.name)
                                  ? "no result from " + placed.at(role.name) + " for this role"
                                  : "not started: the first role did not start");
  }
  outcome.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  outcome.judge();
  return outcome;
}

}  // namespace faultline::harness
