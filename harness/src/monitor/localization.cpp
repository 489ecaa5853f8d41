#include "faultline/harness/monitor/localization.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "faultline/reports/report_view.hpp"

namespace faultline::harness::monitor {

namespace {

using reports::duration_words;

std::string share(size_t part, size_t whole) {
  return std::to_string(part) + " of " + std::to_string(whole);
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

bool touches(const PairResult& pair, const std::string& agent) {
  return pair.a == agent || pair.b == agent;
}

// A busy pair's round trips less its hosts' waits (HostSplit::residual_p10).
std::optional<double> residual(const PairResult& pair) {
  return pair.host ? pair.host->residual_p10 : std::nullopt;
}

// How one bad pair reads in an agent's evidence: "node2: fail: SEND RETRY_EXC_ERR" or
// "node2: 5.20 ms".
std::string pair_words(const PairResult& pair, PairState state, const std::string& agent) {
  const std::string& peer = pair.a == agent ? pair.b : pair.a;
  if (state == PairState::kFailed) {
    // Whole: its end names the host, the device and the QP.
    return peer + ": " + pair.verdict + (pair.observed.empty() ? "" : ": " + pair.observed);
  }
  const auto rtt = pair.judged_rtt() ? pair.judged_rtt() : residual(pair);
  return peer + ": " + (rtt ? duration_words(*rtt) : std::string("slow"));
}

// What an agent's NIC showed: completions with an error status, counters that grew.
std::string device_words(const MonitoredAgent& agent) {
  std::string words;
  for (const auto& [status, count] : agent.completion_errors)
    words += (words.empty() ? "" : ", ") + status + " " + std::to_string(count);
  for (const auto& [counter, grown] : agent.counters_grown)
    words += (words.empty() ? "" : ", ") + counter + " +" + std::to_string(grown);
  return words;
}

// One round being judged: its pairs' states, the agents bad against most of their peers, and
// how the pairs among the others fare.
struct Judged {
  const std::vector<MonitoredAgent>& agents;
  const std::vector<PairResult>& pairs;
  Localization& result;
  std::set<std::string> candidates;
  size_t rest = 0;      // pairs between two agents that are not candidates
  size_t rest_bad = 0;  // of which bad

  bool bad(size_t i) const {
    return result.states[i] == PairState::kFailed || result.states[i] == PairState::kSlow;
  }
  // A pair whose hosts kept it too busy to judge counts neither way.
  bool judged(size_t i) const { return result.states[i] != PairState::kHostBusy; }
};

// The lower of the two middle values of an even count: where half the agents' fastest pairs
// are a thousand times the other half's (measured beside stress-ng: a healthy agent whose
// busy host left it one judged pair, with one of two 12 ms NICs), their midpoint is a round
// trip no pair had; a fabric is judged by its faster half.
double lower_median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

// Each agent's fastest pair by `seconds_of` (a pair's index -> its seconds, or none to leave
// it out), for the agents that have one: what the fabric's medians are taken over.
template <typename SecondsOf>
std::vector<double> each_agents_fastest(const Judged& round, SecondsOf seconds_of) {
  std::vector<double> fastest_of_each;
  for (const auto& agent : round.agents) {
    std::optional<double> fastest;
    for (size_t i = 0; i < round.pairs.size(); ++i) {
      const auto seconds = touches(round.pairs[i], agent.name) ? seconds_of(i) : std::nullopt;
      if (seconds) fastest = std::min(fastest.value_or(*seconds), *seconds);
    }
    if (fastest) fastest_of_each.push_back(*fastest);
  }
  return fastest_of_each;
}

// The pairs too busy to judge on clean round trips, judged against each other: a NIC that
// answers 12 ms late stays 12 ms late less every wait, while a busy host's pairs keep about
// what the waits do not show (the loopback's softirq work, up to a millisecond or so). Their
// median is taken as the fabric's is, over agents of each one's fastest busy pair; a busy pair is
// slow above `slow_factor` times the larger of it and the fabric's median.
void judge_busy_pairs(Judged& round, const LocalizationSettings& settings) {
  const std::vector<double> agent_fastest =
      each_agents_fastest(round, [&round](size_t i) -> std::optional<double> {
        if (round.result.states[i] != PairState::kHostBusy) return std::nullopt;
        return residual(round.pairs[i]);
      });
  // Fewer than three agents with busy pairs make no median of their own: one pair's two ends.
  // The lower median, as the fabric's: three healthy agents' leftovers of 0 and three of a
  // slow NIC's 8 to 10 ms made a midpoint of 4 ms, under which the slow NIC's busy pairs hid.
  if (agent_fastest.size() < 3) return;
  const double median = lower_median_of(agent_fastest);
  round.result.busy_median_residual = median;
  const double reference = std::max(median, round.result.median_rtt);
  for (size_t i = 0; i < round.pairs.size(); ++i) {
    const PairResult& pair = round.pairs[i];
    const auto left = residual(pair);
    // And the fabric's part larger than the hosts': a busy pair whose waits were most of its
    // round trips stays busy, however its leftover compares (measured beside stress-ng: a
    // healthy pair's leftover, a few hundred microseconds, was 3 times a small busy median).
    if (round.result.states[i] == PairState::kHostBusy && left && reference > 0 &&
        *left > settings.slow_factor * reference && *left > pair.host->a_wait + pair.host->b_wait)
      round.result.states[i] = PairState::kSlow;
  }
}

// The fabric's median: over agents, of each agent's fastest judged pair (two slow NICs of six
// make most pairs slow, but not most agents' fastest), the lower median (an agent whose host
// was busy may have one judged pair only). A busy host leaves an agent's fast pairs unjudged and
// its slow ones judged (a NIC 12 ms late outlasts any wait): an agent whose fastest judged pair
// is `slow_factor` times the round's fastest, while one of its busy pairs shows a fabric part
// (its round trips less the waits) under a `slow_factor`-th of it, is left out, its judged pair
// not being its fastest (measured beside stress-ng: four of six agents' fastest judged pairs
// were the slow NICs' 12 ms, and nothing was named).
double fabric_median(const Judged& round, const LocalizationSettings& settings) {
  struct Fastest {
    double judged;
    std::optional<double> busy;  // the smallest fabric part of its busy pairs
  };
  std::vector<Fastest> of_each;
  for (const auto& agent : round.agents) {
    std::optional<double> judged;
    std::optional<double> busy;
    for (const auto& pair : round.pairs) {
      if (!touches(pair, agent.name)) continue;
      const auto rtt = pair.verdict == "pass" ? pair.judged_rtt() : std::nullopt;
      if (rtt) judged = std::min(judged.value_or(*rtt), *rtt);
      const auto left = pair.judged_rtt() ? std::nullopt : residual(pair);
      if (left) busy = std::min(busy.value_or(*left), *left);
    }
    if (judged) of_each.push_back({*judged, busy});
  }
  if (of_each.empty()) return 0;
  const double round_fastest =
      std::min_element(of_each.begin(), of_each.end(), [](const Fastest& x, const Fastest& y) {
        return x.judged < y.judged;
      })->judged;
  std::vector<double> kept;
  for (const auto& [judged, busy] : of_each) {
    const bool not_its_fastest = judged > settings.slow_factor * round_fastest && busy &&
                                 *busy * settings.slow_factor < judged;
    if (!not_its_fastest) kept.push_back(judged);
  }
  return lower_median_of(kept);
}

// The fabric's median, then each pair's state.
void classify(Judged& round, const LocalizationSettings& settings) {
  const double median = fabric_median(round, settings);
  round.result.median_rtt = median;
  for (const auto& pair : round.pairs) {
    const auto rtt = pair.judged_rtt();
    round.result.states.push_back(pair.verdict != "pass" ? PairState::kFailed
                                  : pair.host && !rtt    ? PairState::kHostBusy
                                  : rtt && median > 0 && *rtt > settings.slow_factor * median
                                      ? PairState::kSlow
                                      : PairState::kOk);
  }
  judge_busy_pairs(round, settings);
}

// Agents bad against most of their peers (two at least: one pair cannot tell its ends apart),
// and how the pairs among the others fare. The worst agents are taken first, and a pair with
// an agent already taken is no evidence against its other end: with busy hosts leaving few
// pairs judged, one faulty peer is not half of a healthy agent's evidence.
void find_candidates(Judged& round, const LocalizationSettings& settings) {
  const auto tally = [&](const std::string& agent) {
    std::pair<size_t, size_t> tested_bad{0, 0};
    for (size_t i = 0; i < round.pairs.size(); ++i) {
      const PairResult& pair = round.pairs[i];
      if (!touches(pair, agent) || !round.judged(i) ||
          round.candidates.contains(pair.a == agent ? pair.b : pair.a))
        continue;
      ++tested_bad.first;
      tested_bad.second += round.bad(i) ? 1 : 0;
    }
    return tested_bad;
  };
  // Worst share first; of equal shares, the one with more bad pairs: a healthy agent whose
  // busy host left it two judged pairs, both with slow NICs, is 2 of 2 bad as they are 5 of 5
  // (measured beside stress-ng), and is no evidence once they are taken.
  std::vector<std::tuple<double, double, std::string>> worst_first;
  for (const auto& agent : round.agents) {
    const auto [tested, bad] = tally(agent.name);
    if (tested > 0)
      worst_first.emplace_back(-static_cast<double>(bad) / static_cast<double>(tested),
                               -static_cast<double>(bad), agent.name);
  }
  std::sort(worst_first.begin(), worst_first.end());
  for (const auto& [share_bad, bad_pairs, agent] : worst_first) {
    const auto [tested, bad] = tally(agent);
    if (tested >= 2 && static_cast<double>(bad) >= settings.most * static_cast<double>(tested))
      round.candidates.insert(agent);
  }
  for (size_t i = 0; i < round.pairs.size(); ++i) {
    if (round.candidates.contains(round.pairs[i].a) ||
        round.candidates.contains(round.pairs[i].b) || !round.judged(i))
      continue;
    ++round.rest;
    round.rest_bad += round.bad(i) ? 1 : 0;
  }
}

Suspect fabric_suspect(const Judged& round) {
  size_t all_bad = 0;
  size_t judged = 0;
  for (size_t i = 0; i < round.pairs.size(); ++i) {
    all_bad += round.bad(i) ? 1 : 0;
    judged += round.judged(i) ? 1 : 0;
  }
  return {"fabric", "fabric", "failed",
          share(all_bad, judged) + " pairs bad, " +
              share(round.candidates.size(), round.agents.size()) +
              " agents bad against most of their peers, " + share(round.rest_bad, round.rest) +
              " pairs bad among the others: more than one NIC's fault (a switch, the network, "
              "the monitor's host?)",
          std::vector<std::string>(round.candidates.begin(), round.candidates.end())};
}

// When busy pairs were judged against each other: their median, which the evidence names too.
std::string busy_words(const Localization& result) {
  if (result.busy_median_residual <= result.median_rtt) return "";
  return " (busy hosts' pairs, less their waits for a CPU: " +
         duration_words(result.busy_median_residual) + ")";
}

Suspect agent_suspect(const Judged& round, const MonitoredAgent& agent) {
  size_t tested = 0;
  size_t failed = 0;
  size_t slow = 0;
  std::string examples;
  std::vector<double> slow_rtts;
  for (size_t i = 0; i < round.pairs.size(); ++i) {
    const PairResult& pair = round.pairs[i];
    if (!touches(pair, agent.name) || !round.judged(i)) continue;
    ++tested;
    if (!round.bad(i)) continue;
    const PairState state = round.result.states[i];
    failed += state == PairState::kFailed ? 1 : 0;
    slow += state == PairState::kSlow ? 1 : 0;
    const auto rtt = pair.judged_rtt() ? pair.judged_rtt() : residual(pair);
    if (state == PairState::kSlow && rtt) slow_rtts.push_back(*rtt);
    if (examples.size() < 300)
      examples += (examples.empty() ? "" : "; ") + pair_words(pair, state, agent.name);
  }
  const bool mostly_failed = failed >= slow;
  std::string evidence =
      mostly_failed ? share(failed + slow, tested) + " of its pairs bad (" +
                          std::to_string(failed) + " failed, " + std::to_string(slow) + " slow)"
                    : share(slow, tested) + " of its pairs slow: round trips " +
                          duration_words(median_of(slow_rtts)) + " against the fabric's median " +
                          duration_words(round.result.median_rtt) + busy_words(round.result);
  evidence += ": " + examples + "; the other agents are fine with each other (" +
              share(round.rest_bad, round.rest) + " pairs bad)";
  if (const std::string device = device_words(agent); !device.empty())
    evidence += "; its NIC: " + device;
  return {
      "agent", agent.name, mostly_failed ? "failed" : "slow", std::move(evidence), {agent.name}};
}

// Two or more suspects that are at least half of the agents sharing a label.
void add_label_suspects(const Judged& round, std::vector<Suspect>& suspects) {
  const size_t agent_suspects = suspects.size();
  for (const auto& [kind, label_of] :
       {std::pair<const char*, std::string MonitoredAgent::*>{"rail", &MonitoredAgent::rail},
        {"switch", &MonitoredAgent::switch_label},
        {"host", &MonitoredAgent::host}}) {
    std::map<std::string, std::vector<std::string>> members;
    for (const auto& agent : round.agents)
      if (!(agent.*label_of).empty()) members[agent.*label_of].push_back(agent.name);
    for (const auto& [value, names] : members) {
      std::string reason = "failed";
      std::string list;
      std::vector<std::string> suspected;
      for (size_t i = 0; i < agent_suspects; ++i) {
        const Suspect& one = suspects[i];
        if (std::find(names.begin(), names.end(), one.name) == names.end()) continue;
        suspected.push_back(one.name);
        list += (list.empty() ? "" : ", ") + one.name + " (" + one.reason + ")";
        if (one.reason == "slow") reason = "slow";
      }
      if (suspected.size() < 2 || 2 * suspected.size() < names.size()) continue;
      suspects.push_back({kind, value, reason,
                          share(suspected.size(), names.size()) + " agents of " + kind + " " +
                              value + " are bad against most of their peers: " + list,
                          suspected});
    }
  }
}

// A bad pair between two agents that are otherwise fine: the link between them.
void add_link_suspects(const Judged& round, std::vector<Suspect>& suspects) {
  for (size_t i = 0; i < round.pairs.size(); ++i) {
    const PairResult& pair = round.pairs[i];
    if (!round.bad(i) || round.candidates.contains(pair.a) || round.candidates.contains(pair.b))
      continue;
    const PairState state = round.result.states[i];
    suspects.push_back(
        {"link",
         pair.a + "<->" + pair.b,
         state == PairState::kFailed ? "failed" : "slow",
         "only this pair of theirs is bad: " + pair_words(pair, state, pair.a) +
             (round.result.median_rtt > 0
                  ? " (fabric median " + duration_words(round.result.median_rtt) + ")"
                  : ""),
         {pair.a, pair.b}});
  }
}

// The agents whose waits for a CPU made pairs unjudgeable: a side that delayed a quarter of
// the round trips or more, else both sides.
void find_busy_hosts(const Judged& round, std::vector<BusyHost>& busy) {
  std::map<std::string, std::vector<double>> waits;  // agent -> its wait in each busy pair
  for (size_t i = 0; i < round.pairs.size(); ++i) {
    const PairResult& pair = round.pairs[i];
    if (round.judged(i) || !pair.host) continue;
    const auto& host = *pair.host;
    const bool a_busy = 4 * host.a_disturbed >= host.round_trips;
    const bool b_busy = 4 * host.b_disturbed >= host.round_trips;
    if (a_busy || !b_busy) waits[pair.a].push_back(host.a_wait);
    if (b_busy || !a_busy) waits[pair.b].push_back(host.b_wait);
  }
  for (const auto& agent : round.agents) {
    const auto found = waits.find(agent.name);
    if (found == waits.end()) continue;
    size_t of = 0;
    for (const auto& pair : round.pairs) of += touches(pair, agent.name) ? 1 : 0;
    busy.push_back({agent.name, agent.host, found->second.size(), of, median_of(found->second)});
  }
}

}  // namespace

const char* to_string(PairState state) {
  switch (state) {
    case PairState::kOk: return "ok";
    case PairState::kSlow: return "slow";
    case PairState::kFailed: return "failed";
    case PairState::kHostBusy: return "host busy";
  }
  return "ok";
}

Localization localize(const std::vector<MonitoredAgent>& agents,
                      const std::vector<PairResult>& pairs, const LocalizationSettings& settings) {
  Localization result;
  Judged round{agents, pairs, result, {}, 0, 0};
  classify(round, settings);
  find_busy_hosts(round, result.busy);
  find_candidates(round, settings);
  // The others must be fine with each other, or nothing can be pinned on a few.
  if (!round.candidates.empty() && (2 * round.candidates.size() > agents.size() ||
                                    static_cast<double>(round.rest_bad) >
                                        settings.peers_fine * static_cast<double>(round.rest))) {
    result.suspects.push_back(fabric_suspect(round));
    return result;
  }
  for (const auto& agent : agents)
    if (round.candidates.contains(agent.name))
      result.suspects.push_back(agent_suspect(round, agent));
  add_label_suspects(round, result.suspects);
  add_link_suspects(round, result.suspects);
  return result;
}

}  // namespace faultline::harness::monitor
