#include "faultline/harness/monitor/localization.hpp"
#include "faultline/reports/report_view.hpp"

#include <algorithm>
#include <set>

namespace faultline::harness::monitor {

namespace {

std::string share(size_t part, size_t whole) {
  return std::to_string(part) + " of " + std::to_string(whole);
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

const std::string& other_end(const PairResult& pair, const std::string& agent) {
  return pair.a == agent ? pair.b : pair.a;
}

// How one bad pair reads in an agent's evidence: "node2: fail: RDMA_WRITE REM_ACCESS_ERR" or
// "node2: 5.20 ms".
std::string pair_words(const PairResult& pair, PairState state, const std::string& agent) {
  const std::string peer = other_end(pair, agent);
  if (state == PairState::kFailed) {
    std::string what = pair.observed.substr(0, 80);
    return peer + ": " + pair.verdict + (what.empty() ? "" : ": " + what);
  }
  const auto rtt = pair.judged_rtt();
  return peer + ": " + (rtt ? reports::duration_words(*rtt) : std::string("slow"));
}

// What an agent's NIC showed: counters that grew, completions with an error status.
std::string device_words(const MonitoredAgent& agent) {
  std::string words;
  for (const auto& [status, count] : agent.completion_errors)
    words += (words.empty() ? "" : ", ") + status + " " + std::to_string(count);
  for (const auto& [counter, grown] : agent.counters_grown)
    words += (words.empty() ? "" : ", ") + counter + " +" + std::to_string(grown);
  return words;
}

}  // namespace

const char* to_string(PairState state) {
  switch (state) {
    case PairState::kOk: return "ok";
    case PairState::kSlow: return "slow";
    case PairState::kFailed: return "failed";
  }
  return "ok";
}

Localization localize(const std::vector<MonitoredAgent>& agents,
                      const std::vector<PairResult>& pairs, const LocalizationSettings& settings) {
  Localization result;
  // The fabric's median: over agents, of each agent's median round trip. Two slow NICs of six
  // make most pairs slow, but not most agents' medians.
  std::vector<double> agent_medians;
  for (const auto& agent : agents) {
    std::vector<double> rtts;
    for (const auto& pair : pairs)
      if ((pair.a == agent.name || pair.b == agent.name) && pair.verdict == "pass" &&
          pair.judged_rtt())
        rtts.push_back(*pair.judged_rtt());
    if (!rtts.empty()) agent_medians.push_back(median_of(rtts));
  }
  result.median_rtt = median_of(agent_medians);
  const auto bad = [&result](size_t i) { return result.states[i] != PairState::kOk; };
  for (const auto& pair : pairs) {
    if (pair.verdict != "pass")
      result.states.push_back(PairState::kFailed);
    else if (pair.judged_rtt() && result.median_rtt > 0 &&
             *pair.judged_rtt() > settings.slow_factor * result.median_rtt)
      result.states.push_back(PairState::kSlow);
    else
      result.states.push_back(PairState::kOk);
  }

  // Agents bad against most of their peers (two at least: one pair cannot tell its ends apart).
  std::set<std::string> candidates;
  for (const auto& agent : agents) {
    size_t tested = 0;
    size_t bad_pairs = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (pairs[i].a != agent.name && pairs[i].b != agent.name) continue;
      ++tested;
      bad_pairs += bad(i) ? 1 : 0;
    }
    if (tested >= 2 &&
        static_cast<double>(bad_pairs) >= settings.most * static_cast<double>(tested))
      candidates.insert(agent.name);
  }
  // The others must be fine with each other, or nothing can be pinned on a few.
  size_t rest = 0;
  size_t rest_bad = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (candidates.contains(pairs[i].a) || candidates.contains(pairs[i].b)) continue;
    ++rest;
    rest_bad += bad(i) ? 1 : 0;
  }
  size_t all_bad = 0;
  for (size_t i = 0; i < pairs.size(); ++i) all_bad += bad(i) ? 1 : 0;
  const bool fabric_wide =
      !candidates.empty() &&
      (2 * candidates.size() > agents.size() ||
       static_cast<double>(rest_bad) > settings.peers_fine * static_cast<double>(rest));
  if (fabric_wide) {
    result.suspects.push_back(
        {"fabric", "fabric", "failed",
         share(all_bad, pairs.size()) + " pairs bad, " + share(candidates.size(), agents.size()) +
             " agents bad against most of their peers, " + share(rest_bad, rest) +
             " pairs bad among the others: more than one NIC's fault (a switch, the network, "
             "the coordinator's host?)",
         std::vector<std::string>(candidates.begin(), candidates.end())});
    return result;
  }

  for (const auto& agent : agents) {
    if (!candidates.contains(agent.name)) continue;
    size_t tested = 0;
    size_t failed = 0;
    size_t slow = 0;
    std::string examples;
    std::vector<double> bad_rtts;
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (pairs[i].a != agent.name && pairs[i].b != agent.name) continue;
      ++tested;
      if (!bad(i)) continue;
      failed += result.states[i] == PairState::kFailed ? 1 : 0;
      slow += result.states[i] == PairState::kSlow ? 1 : 0;
      if (pairs[i].judged_rtt() && result.states[i] == PairState::kSlow)
        bad_rtts.push_back(*pairs[i].judged_rtt());
      if (examples.size() < 300)
        examples +=
            (examples.empty() ? "" : "; ") + pair_words(pairs[i], result.states[i], agent.name);
    }
    const bool mostly_failed = failed >= slow;
    std::string evidence =
        mostly_failed
            ? share(failed + slow, tested) + " of its pairs bad (" + std::to_string(failed) +
                  " failed, " + std::to_string(slow) + " slow)"
            : share(slow, tested) + " of its pairs slow: round trips " +
                  reports::duration_words(median_of(bad_rtts)) + " against the fabric's median " +
                  reports::duration_words(result.median_rtt);
    evidence += ": " + examples + "; the other agents are fine with each other (" +
                share(rest_bad, rest) + " pairs bad)";
    if (const std::string device = device_words(agent); !device.empty())
      evidence += "; its NIC: " + device;
    result.suspects.push_back({"agent",
                               agent.name,
                               mostly_failed ? "failed" : "slow",
                               std::move(evidence),
                               {agent.name}});
  }

  // Labels whose agents fail together.
  const size_t agent_suspects = result.suspects.size();
  for (const auto& [kind, label_of] :
       {std::pair<const char*, std::string MonitoredAgent::*>{"rail", &MonitoredAgent::rail},
        {"switch", &MonitoredAgent::switch_label},
        {"host", &MonitoredAgent::host}}) {
    std::map<std::string, std::vector<std::string>> members;
    for (const auto& agent : agents)
      if (!(agent.*label_of).empty()) members[agent.*label_of].push_back(agent.name);
    for (const auto& [value, names] : members) {
      std::vector<std::string> suspected;
      for (const auto& name : names)
        if (candidates.contains(name)) suspected.push_back(name);
      if (suspected.size() < 2 || 2 * suspected.size() < names.size()) continue;
      std::string reason = "failed";
      std::string list;
      for (size_t i = 0; i < agent_suspects; ++i) {
        const Suspect& one = result.suspects[i];
        if (std::find(suspected.begin(), suspected.end(), one.name) == suspected.end()) continue;
        list += (list.empty() ? "" : ", ") + one.name + " (" + one.reason + ")";
        if (one.reason == "slow") reason = "slow";
      }
      result.suspects.push_back({kind, value, reason,
                                 share(suspected.size(), names.size()) + " agents of " + kind +
                                     " " + value + " are bad against most of their peers: " + list,
                                 suspected});
    }
  }

  // A bad pair between two agents that are otherwise fine: the link between them.
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!bad(i) || candidates.contains(pairs[i].a) || candidates.contains(pairs[i].b)) continue;
    result.suspects.push_back(
        {"link",
         pairs[i].a + "<->" + pairs[i].b,
         result.states[i] == PairState::kFailed ? "failed" : "slow",
         "only this pair of theirs is bad: " + pair_words(pairs[i], result.states[i], pairs[i].a) +
             (result.median_rtt > 0
                  ? " (fabric median " + reports::duration_words(result.median_rtt) + ")"
                  : ""),
         {pairs[i].a, pairs[i].b}});
  }
  return result;
}

}  // namespace faultline::harness::monitor
