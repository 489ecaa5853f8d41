// The coordinator's run table: agents as they join and are lost, the runs of each round, the
// relays (endpoint info, barriers), every deadline, and each run's verdict.
#include <algorithm>
#include <iostream>
#include <numeric>
#include <utility>

#include "faultline/core/printable_text.hpp"
#include "faultline/harness/base/labels.hpp"
#include "faultline/harness/control/coordinator.hpp"

#include "faultline/harness/control/agent.hpp"
#include "faultline/harness/control/pair_schedule.hpp"
#include "faultline/harness/control/peer_record_checks.hpp"
#include "role_log.hpp"

namespace faultline::harness {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Whether the scenario joins this coordinator with the wrong token on purpose.
bool joins_with_wrong_token(const ScenarioSpec& scenario) {
  if (!scenario.document.is_object()) return false;
  const auto steps = scenario.document.value("steps", nlohmann::json::array());
  return std::any_of(steps.begin(), steps.end(), [](const nlohmann::json& step) {
    return step.is_object() && step.value("op", "") == "control.join" &&
           step.value("misconfigure", "") == "token";
  });
}

// After one side reports a failure, how long the other side gets to report its own view.
constexpr auto kGraceAfterFirstFailure = 2s;

}  // namespace

AgentRecord* Coordinator::agent(const std::string& id) {
  for (auto& record : agents_) {
    if (record.id == id) return &record;
  }
  return nullptr;
}

std::string Coordinator::name_of(const std::string& id) const {
  for (const auto& record : agents_)
    if (record.id == id) return record.name;
  return id;
}

Status Coordinator::wait_for_agents(std::chrono::milliseconds timeout) {
  struct Quiet : RunObserver {
  } quiet;
  const auto deadline = Clock::now() + timeout;
  const auto live = [this] {
    return static_cast<size_t>(std::count_if(agents_.begin(), agents_.end(),
                                             [](const AgentRecord& a) { return !a.lost; }));
  };
  while (live() < options_.agents) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return Error{ErrorCode::kTimeout,
                   "only " + std::to_string(live()) + " of " + std::to_string(options_.agents) +
                       " agents connected within " + std::to_string(timeout.count() / 1000) + " s"}
          .with_hint("start the agents with --coordinator pointing here and the same token");
    }
    if (auto event = events_.pop(std::min(left, std::chrono::milliseconds(100))))
      handle(*event, quiet);
  }
  // Those lost while waiting gave their places to others: the runs are among those here.
  std::erase_if(agents_, [](const AgentRecord& a) { return a.lost; });
  // Ranks by name, not by who joined first: the same agents make the same pairs and rings
  // from run to run, so the reports (and a CI's test history) follow them.
  std::stable_sort(agents_.begin(), agents_.end(), [](const AgentRecord& a, const AgentRecord& b) {
    return label_less(a.name, b.name);
  });
  runs_started_ = true;
  return {};
}

Coordinator::ActiveRun* Coordinator::active_run(uint64_t run_id, const std::string& agent_id) {
  for (auto& run : active_) {
    if (run.result.run_id == run_id && !run.finished && run.involves(agent_id)) {
      return &run;
    }
  }
  return nullptr;
}

void Coordinator::handle(const Event& event, RunObserver& observer) {
  switch (event.kind) {
    case EventKind::kJoined: return joined(event);
    case EventKind::kLost: return mark_lost(event.agent_id, event.reason, observer);
    case EventKind::kMessage: break;
  }
  AgentRecord* record = agent(event.agent_id);
  if (record == nullptr || record->lost) return;
  record->last_seen = Clock::now();
  const nlohmann::json& message = event.message;
  const std::string type = message.at("type");
  if (type == "heartbeat") return;
  ActiveRun* run = active_run(message.at("run_id"), event.agent_id);
  if (run == nullptr) return;  // a late message for a run that already ended
  run->heard_from.insert(event.agent_id);
  if (!run->first_heard) run->first_heard = Clock::now();
  if (type == "step") {
    const std::string step = printable(message.at("name").get<std::string>());
    run->last_step[event.agent_id] = step;
    run->step_started[event.agent_id] = Clock::now();
    observer.step(run->result, event.agent_id, step);
  } else if (type == "endpoint_info") {
    relay_endpoint_info(*run, event.agent_id, message.at("info"));
  } else if (type == "barrier") {
    reach_barrier(*run, event.agent_id, message.at("name"));
  } else if (type == "scenario_result") {
    take_result(*run, event.agent_id, message, observer);
  }
}

transports::Target Coordinator::agents_target() const {
  if (agents_.empty()) return {"", "", ""};
  transports::Target common = agents_.front().target;
  for (const auto& agent : agents_) {
    if (agent.target.transport != common.transport) common.transport = "mixed";
    if (agent.target.provider != common.provider) common.provider = "mixed";
    if (agent.target.device != common.device) common.device = "mixed";
  }
  return common;
}

std::string Coordinator::unique_name(const std::string& asked) const {
  // In open membership an agent that comes back after its loss takes its name back.
  const auto taken = [this](const std::string& name) {
    return std::any_of(agents_.begin(), agents_.end(), [&](const AgentRecord& agent) {
      return agent.name == name && !(options_.open_membership && agent.lost);
    });
  };
  std::string name = asked;
  for (size_t n = 2; taken(name); ++n) {
    // Names stay within the report's 64 characters: the suffix replaces the end if need be.
    const std::string suffix = "-" + std::to_string(n);
    name = asked.substr(0, 64 - suffix.size()) + suffix;
  }
  return name;
}

void Coordinator::joined(const Event& event) {
  AgentRecord record;
  record.id = event.agent_id;
  record.host = event.message.at("host");
  record.pid = event.message.at("pid");
  record.remote = event.message.at("remote");
  record.rail = event.message.value("rail", "");
  const nlohmann::json target = event.message.value("target", nlohmann::json::object());
  record.target = transports::Target{target.value("transport", "ofi"), target.value("provider", ""),
                                     target.value("device", "")}
                      .with_defaults();
  record.name = unique_name(event.message.value("name", agent_name_from_host(record.host)));
  record.hello = event.message;
  record.last_seen = Clock::now();
  coordinator_log(record.id + " joined from " + record.remote + " (" + record.name + ", host " +
                  record.host + ", pid " + std::to_string(record.pid) + ", " +
                  record.target.text() + ")");
  agents_.push_back(std::move(record));
  // Joins are handled in whatever order their threads got here; keep the order of the ids
  // (agent-2 before agent-10), so that pairs and rings are the same from run to run.
  std::sort(agents_.begin(), agents_.end(), [](const AgentRecord& a, const AgentRecord& b) {
    return a.id.size() != b.id.size() ? a.id.size() < b.id.size() : a.id < b.id;
  });
}

void Coordinator::relay_endpoint_info(ActiveRun& run, const std::string& agent_id,
                                      const nlohmann::json& info) {
  const auto& agents = run.result.agents;
  run.infos[agent_id] = info;
  if (run.infos.size() != agents.size()) return;
  // A pair gets the other side's info; a ring gets every rank's, in rank order.
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& id : agents) ranks.push_back(run.infos.at(id));
  for (size_t i = 0; i < agents.size(); ++i) {
    const nlohmann::json peer =
        run.spec->topology == Topology::kRing ? nlohmann::json{{"ranks", ranks}} : ranks.at(1 - i);
    send_to(agents[i], "peer_info", {{"run_id", run.result.run_id}, {"info", peer}});
  }
  run.infos.clear();  // a later exchange (a reconnect) is a round of its own
}

void Coordinator::reach_barrier(ActiveRun& run, const std::string& agent_id,
                                const std::string& name) {
  run.barriers[name].insert(agent_id);
  release_barriers(run);
}

void Coordinator::release_barriers(ActiveRun& run) {
  // A side that died as its scenario asked (the `die` step) counts as there: its peer goes on.
  const auto there = [&run](const std::set<std::string>& arrived, const std::string& id) {
    return arrived.contains(id) ||
           (run.result.sides.contains(id) && run.result.sides.at(id).contains("died"));
  };
  for (auto it = run.barriers.begin(); it != run.barriers.end();) {
    const auto& arrived = it->second;
    if (!std::all_of(run.result.agents.begin(), run.result.agents.end(),
                     [&](const std::string& id) { return there(arrived, id); })) {
      ++it;
      continue;
    }
    for (const auto& id : run.result.agents) {
      if (arrived.contains(id))
        send_to(id, "barrier_release", {{"run_id", run.result.run_id}, {"name", it->first}});
    }
    it = run.barriers.erase(it);  // the same name may be reached again
  }
}

void Coordinator::take_result(ActiveRun& run, const std::string& agent_id,
                              const nlohmann::json& message, RunObserver& observer) {
  // Nothing a peer sends reaches the report unless the report's schema allows it.
  auto checked = side_from_result(message);
  if (!checked.ok()) return mark_lost(agent_id, checked.error().message, observer);
  const nlohmann::json& side = checked.value();
  run.result.sides[agent_id] = side;
  if (side.contains("died")) release_barriers(run);  // its peer may be waiting for it
  const auto verdict =
      verdict_from_string(message.at("verdict").get<std::string>()).value_or(Verdict::kError);
  const auto& agents = run.result.agents;
  if (run.result.sides.size() == agents.size() || verdict == Verdict::kCrashed) {
    finish(run, observer);
    for (const auto& id : agents) {
      if (!run.result.sides.contains(id))
        send_to(id, "abort_scenario", {{"run_id", run.result.run_id}});
    }
  } else if (verdict != Verdict::kPass && !run.grace_until) {
    run.grace_until = Clock::now() + kGraceAfterFirstFailure;
  }
}

void Coordinator::finish(ActiveRun& run, RunObserver& observer) {
  // The most specific failure among the sides speaks for the run, named by its agent.
  Verdict verdict = Verdict::kPass;
  const nlohmann::json* speaker = nullptr;
  std::string speaker_id;
  // In rank order: of two sides equally severe (both skip) the same one speaks in every run.
  for (const auto& agent_id : run.result.agents) {
    if (!run.result.sides.contains(agent_id)) continue;
    const nlohmann::json& side = run.result.sides.at(agent_id);
    const Verdict side_verdict =
        verdict_from_string(side.value("verdict", "error")).value_or(Verdict::kError);
    if (speaker == nullptr || severity(side_verdict) > severity(verdict)) {
      verdict = side_verdict;
      speaker = &side;
      speaker_id = agent_id;
    }
  }
  if (run.result.sides.size() < run.result.agents.size() && verdict == Verdict::kPass)
    verdict = Verdict::kError;
  std::string observed;
  std::string evidence;
  std::string hint;
  if (speaker != nullptr && verdict != Verdict::kPass) {
    const auto rank = static_cast<size_t>(
        std::find(run.result.agents.begin(), run.result.agents.end(), speaker_id) -
        run.result.agents.begin());
    const std::string role = run.spec->topology == Topology::kRing ? "rank " + std::to_string(rank)
                             : rank == 0                           ? std::string("initiator")
                                                                   : std::string("responder");
    // A peer's words reach terminals and reports: printable, no escape sequence.
    observed =
        name_of(speaker_id) + " (" + role + "): " + printable(speaker->value("observed", ""));
    evidence = printable(speaker->value("evidence", ""));
    hint = printable(speaker->value("hint", ""));
    run.result.expected = printable(speaker->value("expected", ""));
  }
  if (verdict == Verdict::kPass) {
    // What each side saw where its steps expected a failure (a detected violation).
    for (const auto& [agent_id, side] : run.result.sides.items()) {
      const std::string seen = printable(side.value("observed", ""));
      if (!seen.empty())
        observed += (observed.empty() ? "" : " | ") + name_of(agent_id) + ": " + seen;
    }
  }
  finish_with(run, verdict, observed, evidence, hint, observer);
}

void Coordinator::finish_with(ActiveRun& run, Verdict verdict, std::string observed,
                              std::string evidence, std::string hint, RunObserver& observer) {
  run.finished = true;
  if (run.deliberate_join) --deliberate_joins_;
  if (!observed.empty()) run.result.observed = std::move(observed);
  if (!evidence.empty()) run.result.evidence = std::move(evidence);
  if (!hint.empty()) run.result.hint = std::move(hint);
  const SettledVerdict settled = settle_verdict(verdict, run.exclude_reason, run.strict,
                                                run.result.observed, run.result.evidence);
  if (!settled.expected.empty()) run.result.expected = settled.expected;
  if (!settled.observed.empty()) run.result.observed = settled.observed;
  if (!settled.evidence.empty()) run.result.evidence = settled.evidence;
  run.result.verdict = settled.verdict;
  run.result.duration_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - run.started).count();
  for (const auto& agent_id : run.result.agents) {
    send_to(agent_id, "run_result",
            {{"run_id", run.result.run_id},
             {"id", run.result.scenario},
             {"suite", suite_},
             {"verdict", to_string(run.result.verdict)},
             {"duration_ms", run.result.duration_ms}});
  }
  observer.run_finished(run.result);
}

void Coordinator::mark_lost(const std::string& agent_id, const std::string& reason,
                            RunObserver& observer) {
  AgentRecord* record = agent(agent_id);
  if (record == nullptr || record->lost) return;
  record->lost = true;
  record->lost_reason = reason;
  coordinator_log(
      agent_id + " lost: " + reason +
      (runs_started_ ? "" : "; its place is free for another agent until the first run starts"));
  if (!runs_started_ || options_.open_membership) ++freed_places_;
  observer.agent_lost(*record);
  if (const auto channel = channel_of(agent_id)) channel->shutdown();
  for (auto& run : active_) {
    if (run.finished || !run.involves(agent_id)) continue;
    finish_with(run, Verdict::kError,
                "agent lost: " + record->name + " (" + agent_id + ", host " + record->host +
                    ", pid " + std::to_string(record->pid) + ")",
                reason + "; last step of " + record->name + ": " + run.last_step[agent_id],
                "the agent process died or its host stopped answering; check the agent's log",
                observer);
    for (const auto& other : run.result.agents) {
      if (other != agent_id) send_to(other, "abort_scenario", {{"run_id", run.result.run_id}});
    }
  }
}

void Coordinator::handle_events(std::chrono::milliseconds wait, RunObserver& observer) {
  // Everything that arrived is handled before any deadline is judged: a coordinator that was
  // itself held up (a busy host) must not take its agents' queued heartbeats for silence.
  // A send that failed is why its agent is lost, before the closed connection it caused.
  constexpr int kMostAtOnce = 10000;
  auto event = events_.pop(wait);
  for (int handled = 1; event; ++handled) {
    lose_agents_whose_sends_failed(observer);
    handle(*event, observer);
    if (handled == kMostAtOnce) break;
    event = events_.pop(0ms);
  }
  check_deadlines(observer);
}

void Coordinator::lose_agents_whose_sends_failed(RunObserver& observer) {
  for (const auto& [agent_id, reason] : std::exchange(send_failures_, {}))
    mark_lost(agent_id, reason, observer);
}

std::optional<std::pair<std::string, std::string>> Coordinator::stuck_side(
    const ActiveRun& run, Clock::time_point now) const {
  const std::string limit = std::to_string(options_.step_deadline.count()) + " ms";
  for (const auto& id : run.result.agents) {
    if (run.result.sides.contains(id)) continue;
    const auto step = run.step_started.find(id);
    if (step != run.step_started.end() && now - step->second > options_.step_deadline)
      return std::pair{id, name_of(id) + " spent more than " + limit + " in one step"};
    // One that says nothing while a peer runs (it heartbeats but never runs its part) is held
    // to the step deadline from the peer's first word: both started their part together.
    if (!run.heard_from.contains(id) && run.first_heard &&
        now - *run.first_heard > options_.step_deadline)
      return std::pair{id,
                       name_of(id) + " said nothing of its part within " + limit + " of its peer"};
  }
  return std::nullopt;
}

void Coordinator::check_deadlines(RunObserver& observer) {
  lose_agents_whose_sends_failed(observer);
  const auto now = Clock::now();
  for (auto& record : agents_) {
    if (!record.lost && now - record.last_seen > options_.agent_lost_after) {
      mark_lost(record.id,
                "no message or heartbeat for " + std::to_string(options_.agent_lost_after.count()) +
                    " ms",
                observer);
    }
  }
  for (auto& run : active_) {
    if (run.finished) continue;
    if (run.grace_until && now > *run.grace_until) {
      finish(run, observer);
    } else if (const auto stuck = stuck_side(run, now)) {
      const auto step = run.last_step.find(stuck->first);
      finish_with(run, Verdict::kTimeout, stuck->second,
                  "the step: " + (step != run.last_step.end() ? step->second : "(none)"),
                  "the step hung; a completion that never came, or a peer that never reached "
                  "the same barrier, is the usual cause",
                  observer);
    } else if (now > run.deadline) {
      std::string steps;
      for (const auto& [agent_id, step] : run.last_step)
        steps += (steps.empty() ? "" : "; ") + name_of(agent_id) + ": " + step;
      finish_with(run, Verdict::kTimeout, "no result within the deadline",
                  "last steps: " + (steps.empty() ? std::string("none") : steps),
                  "the scenario hung; a completion that never came is the usual cause", observer);
    } else {
      continue;
    }
    for (const auto& agent_id : run.result.agents) {
      send_to(agent_id, "abort_scenario", {{"run_id", run.result.run_id}});
    }
  }
}

PairRounds Coordinator::pair_rounds(uint64_t seed) const {
  std::vector<std::string> rails;
  for (const auto& agent : agents_) rails.push_back(agent.rail);
  return PairRounds(options_.pairs, std::move(rails), seed);
}

size_t Coordinator::planned_runs(const std::vector<ScenarioSpec>& scenarios, uint64_t seed) const {
  const size_t pairs = pair_rounds(seed).pair_count();
  size_t runs = 0;
  for (const auto& scenario : scenarios) runs += scenario.topology == Topology::kRing ? 1 : pairs;
  return runs;
}

size_t Coordinator::round_count(const ScenarioSpec& scenario, const PairRounds& pairs) const {
  return scenario.topology == Topology::kRing ? 1 : pairs.count();
}

std::vector<std::vector<size_t>> Coordinator::round_members(const ScenarioSpec& scenario,
                                                            const PairRounds& pairs,
                                                            size_t round) const {
  if (scenario.topology == Topology::kRing) {
    // A ring runs once over every agent, in the order they joined.
    std::vector<size_t> ring(agents_.size());
    std::iota(ring.begin(), ring.end(), size_t{0});
    return {ring};
  }
  std::vector<std::vector<size_t>> runs;
  for (const auto& [a, b] : pairs.round(round)) runs.push_back({a, b});
  return runs;
}

Coordinator::ActiveRun Coordinator::new_run(const ScenarioSpec& scenario,
                                            const RunSettings& settings, size_t round,
                                            const std::vector<size_t>& members) {
  ActiveRun run;
  run.spec = &scenario;
  run.strict = settings.strict;
  run.result.run_id = next_run_id_++;
  run.result.scenario = scenario.id;
  run.result.tags = scenario.tags;
  run.result.source = scenario.source;
  run.result.sha256 = scenario.sha256;
  run.result.seed = settings.seed;
  run.result.round = round + 1;
  std::vector<transports::Target> targets;
  for (size_t index : members) {
    const AgentRecord& member = agents_[index];
    run.result.agents.push_back(member.id);
    run.result.targets.push_back(member.target.text());
    targets.push_back(member.target);
  }
  run.exclude_reason = scenario.exclude_reason(targets);
  run.result.initiator = run.result.agents.at(0);
  run.result.responder = run.result.agents.at(1);
  run.result.expected = "every side passes";
  run.started = Clock::now();
  run.deadline = run.started + scenario.deadline;
  return run;
}

void Coordinator::launch(ActiveRun& run, const RunSettings& settings, RunObserver& observer) {
  observer.run_started(run.result);
  for (const auto& id : run.result.agents) {
    const AgentRecord* record = agent(id);
    if (record->lost) {
      finish_with(run, Verdict::kError, "agent lost: " + record->name + " was lost earlier",
                  record->lost_reason,
                  "the agent process died or its host stopped answering; check the agent's log",
                  observer);
      return;
    }
  }
  const ScenarioSpec& scenario = *run.spec;
  run.deliberate_join = joins_with_wrong_token(scenario);
  if (run.deliberate_join) ++deliberate_joins_;
  const bool ring = scenario.topology == Topology::kRing;
  const size_t size = run.result.agents.size();
  for (size_t rank = 0; rank < size; ++rank) {
    nlohmann::json params = {{"seed", settings.seed},
                             {"role_name", scenario.roles.at(ring ? 0 : rank)},
                             {"rank", rank},
                             {"size", size}};
    if (!scenario.document.is_null()) params["document"] = scenario.document;
    send_to(run.result.agents[rank], "run_scenario",
            {{"run_id", run.result.run_id},
             {"scenario", scenario.id},
             {"role", ring ? "rank" : (rank == 0 ? "initiator" : "responder")},
             {"params", params},
             {"target", nlohmann::json::object()},
             {"deadline_ms", static_cast<uint64_t>(scenario.deadline.count())}});
  }
}

std::vector<ScenarioRun> Coordinator::run(const std::vector<ScenarioSpec>& scenarios,
                                          const RunSettings& settings, RunObserver& observer) {
  std::vector<ScenarioRun> results;
  suite_ = settings.suite;
  runs_started_ = true;
  const PairRounds pairs = pair_rounds(settings.seed);
  for (const ScenarioSpec& scenario : scenarios) {
    // One round at a time: all pairs of thousands of agents are tens of millions of runs.
    for (size_t round = 0; round < round_count(scenario, pairs); ++round) {
      const auto members = round_members(scenario, pairs, round);
      const size_t at_once =
          options_.max_concurrent_runs == 0 ? members.size() : options_.max_concurrent_runs;
      for (size_t first = 0; first < members.size(); first += at_once) {
        active_.clear();
        for (size_t i = first; i < std::min(members.size(), first + at_once); ++i)
          active_.push_back(new_run(scenario, settings, round, members[i]));
        for (auto& run : active_) launch(run, settings, observer);
        auto unfinished = [&] {
          return std::any_of(active_.begin(), active_.end(),
                             [](const ActiveRun& r) { return !r.finished; });
        };
        while (unfinished()) handle_events(100ms, observer);
        for (auto& run : active_) results.push_back(run.result);
      }
    }
  }
  active_.clear();
  return results;
}

void Coordinator::idle(std::chrono::milliseconds duration, RunObserver& observer) {
  const auto until = Clock::now() + duration;
  for (auto now = Clock::now(); now < until; now = Clock::now()) {
    handle_events(std::min<std::chrono::milliseconds>(
                      std::chrono::duration_cast<std::chrono::milliseconds>(until - now), 100ms),
                  observer);
  }
}

void Coordinator::forget_lost_agents() {
  std::erase_if(agents_, [](const AgentRecord& a) { return a.lost; });
}

void Coordinator::shutdown_agents() {
  released_ = true;
  for (const auto& record : agents_) send_to(record.id, "shutdown", nlohmann::json::object());
}

}  // namespace faultline::harness
