#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace faultline::harness::monitor {

/// An agent of a round, as the monitor knows it.
struct MonitoredAgent {
  std::string name;
  std::string rail;
  std::string switch_label;
  std::string host;
  /// What its NIC's port counters grew by during the round ("hw_counters/rcvd_rnr_err" -> 3),
  /// and its completions that did not succeed, by status: evidence, not verdicts.
  std::map<std::string, uint64_t> counters_grown;
  std::map<std::string, uint64_t> completion_errors;
};

/// One probed pair of a round.
struct PairResult {
  std::string a;  ///< the initiator's name
  std::string b;  ///< the responder's name
  std::string verdict = "pass";
  std::string observed;           ///< what went wrong, when it did
  std::optional<double> rtt_p50;  ///< seconds, from the probe's round trips
  std::optional<double> rtt_p99;
  /// The fastest tenth of its round trips: what slowness is judged on, so a host busy for a
  /// moment (its cores shared) is not a slow NIC, while one slow on every round trip is.
  std::optional<double> rtt_p10;

  /// rtt_p10, or rtt_p50 where the probe gave no p10.
  std::optional<double> judged_rtt() const { return rtt_p10 ? rtt_p10 : rtt_p50; }
};

enum class PairState { kOk, kSlow, kFailed };
const char* to_string(PairState state);

/// What the monitor names as the likely fault of a round.
struct Suspect {
  std::string kind;    ///< "agent", "rail", "switch", "host", "link", or "fabric"
  std::string name;    ///< the agent, the label's value, "a<->b", or "fabric"
  std::string reason;  ///< "failed" or "slow"
  std::string evidence;
  std::vector<std::string> agents;  ///< the agents it covers
  size_t rounds = 1;                ///< consecutive rounds it has held, this one included
};

/// Thresholds, relative to the fabric's own numbers.
struct LocalizationSettings {
  /// A pair is slow when its judged round trip (PairResult::judged_rtt) is more than this
  /// many times the fabric's median (Localization::median_rtt).
  double slow_factor = 3.0;
  /// An agent is a suspect when at least this share of its pairs are bad ...
  double most = 0.5;
  /// ... while the pairs among the other agents are at most this share bad.
  double peers_fine = 0.25;
  /// Rounds in a row a suspect must hold before it is named (--confirm); before, it is watched.
  size_t confirm_rounds = 2;
};

struct Localization {
  /// The fabric's median round trip: over agents, of each agent's median judged pair round
  /// trip (so a few slow NICs, whose pairs may be most of the pairs, do not move it); 0
  /// without one.
  double median_rtt = 0;
  std::vector<PairState> states;  ///< one per pair, in the order given
  std::vector<Suspect> suspects;
  /// Suspects not yet held for the rounds `--confirm` asks (SuspectConfirmation): said, not
  /// named.
  std::vector<Suspect> watching;
};

/// Turns a round's pair matrix into suspects, the way Pingmesh and R-Pingmesh reason: an
/// agent whose pairs fail or are slow against most of its peers (two at least) while the other
/// agents are fine with each other is the suspect; two or more suspects that are at least half
/// of the agents sharing a label (rail, switch, host) point at that label; a bad pair between
/// two agents that are otherwise fine is the link; when most of the fabric is bad no single
/// agent is named, the fabric is.
Localization localize(const std::vector<MonitoredAgent>& agents,
                      const std::vector<PairResult>& pairs, const LocalizationSettings& settings);

}  // namespace faultline::harness::monitor
