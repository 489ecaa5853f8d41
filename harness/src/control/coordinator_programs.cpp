// The coordinator's program jobs: each role on an agent (role i on live agent i mod n, so a
// server and its client land on two hosts, a launcher on one), the first role's port and
// address handed to the others, the judged role awaited, the others given the grace period
// and then stopped, every role's summary into the job's outcome.
#include <algorithm>
#include <map>
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

bool offers(const AgentRecord& agent, const std::string& kind) {
  const json kinds = agent.hello.value("programs", json::array());
  return kinds.is_array() && std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

struct Quiet : RunObserver {};

}  // namespace

struct Coordinator::ProgramRun {
  const ProgramJob& job;
  ProgramJobOutcome outcome;
  std::map<std::string, std::string> placed;  // role -> id of the agent it runs on
  uint64_t run_id = 0;
  json values = json::object();   // the first role's port and address
  std::set<std::string> running;  // started, no result yet
};

ProgramJobOutcome Coordinator::run_programs(const ProgramJob& job) {
  ProgramRun run{job, {}};
  if (!place_roles(run)) return run.outcome;
  run.run_id = next_run_id_++;
  const auto started = Clock::now();
  start_roles(run);
  // The judged role ends within its deadline (its agent stops it there).
  wait_programs(
      run, [&] { return !run.running.contains(job.judged); },
      after(job.deadline_seconds) + kStopBudget);
  wait_programs(
      run, [&] { return run.running.empty(); }, after(job.grace_seconds));
  std::set<std::string> told;
  for (const auto& role : run.running) {
    if (told.insert(run.placed.at(role)).second)
      send_to(run.placed.at(role), "abort_scenario", {{"run_id", run.run_id}});
  }
  wait_programs(
      run, [&] { return run.running.empty(); }, Clock::now() + kStopBudget);
  for (const auto& role : job.roles) {
    if (run.outcome.summaries.contains(role.name) || run.outcome.errors.contains(role.name))
      continue;
    const std::string& agent_id = run.placed.at(role.name);
    run.outcome.errors[role.name] = run.running.contains(role.name)
                                        ? "no result from " + name_of(agent_id) + " for it"
                                        : "not started: the first role did not start";
  }
  run.outcome.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return run.outcome;
}

bool Coordinator::place_roles(ProgramRun& run) {
  std::vector<std::string> live;
  for (const auto& record : agents_)
    if (!record.lost) live.push_back(record.id);
  if (live.empty()) {
    run.outcome.unplaced_result = "error";
    run.outcome.unplaced_reason = "no agent is left to run its programs";
    return false;
  }
  for (size_t i = 0; i < run.job.roles.size(); ++i) {
    const AgentRecord& record = *agent(live[i % live.size()]);
    run.placed[run.job.roles[i].name] = record.id;
    run.outcome.agents[run.job.roles[i].name] = record.name;
    if (!offers(record, run.job.kind)) {
      run.outcome.unplaced_result = "skip";
      run.outcome.unplaced_reason =
          record.name + " (host " + record.host + ") cannot run " + run.job.kind + " programs";
      return false;
    }
  }
  return true;
}

void Coordinator::start_roles(ProgramRun& run) {
  for (size_t i = 0; i < run.job.roles.size(); ++i) {
    const ProgramJob::Role& role = run.job.roles[i];
    if (role.after_ms > 0) {
      wait_programs(
          run, [] { return false; }, Clock::now() + std::chrono::milliseconds(role.after_ms));
    }
    send_to(run.placed.at(role.name), "run_program",
            {{"run_id", run.run_id},
             {"job", run.job.name},
             {"role", role.name},
             {"body", role.body},
             {"values", run.values},
             {"listens", role.listens}});
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
      run.outcome.errors[*it] = record->id + " lost: " + record->lost_reason;
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
    if (role == run.job.roles.front().name && run.values.empty()) {
      // Relayed to the other roles' agents only as a port and an address: what a rogue agent
      // puts there otherwise stops the job here.
      auto values = program_values_from(message.at("values"));
      if (!values.ok()) {
        run.outcome.errors[role] = name_of(agent_id) +
                                   " answered program_started with what no program may be given: " +
                                   values.error().message;
        run.running.erase(role);
        send_to(agent_id, "abort_scenario", {{"run_id", run.run_id}});
        return;
      }
      run.values = values->to_json();
    }
  } else if (message.at("type") == "program_result" && run.running.erase(role) == 1) {
    // The job's owner checks it. Its log is a path on the agent's host, named here by the
    // agent's name.
    json summary = message.at("summary");
    if (const std::string log = text_at(summary, "log"); !log.empty())
      summary["log"] = name_of(agent_id) + ":" + log;
    run.outcome.summaries[role] = std::move(summary);
  }
}

}  // namespace faultline::harness
