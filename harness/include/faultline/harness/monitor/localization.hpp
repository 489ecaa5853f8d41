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
  /// The fastest tenth of its round trips.
  std::optional<double> rtt_p10;

  /// The probe's split of its round trips into the hosts' part and the fabric's: each side's
  /// wait for a CPU, and the round trips neither side's wait delayed (the fabric's).
  struct HostSplit {
    size_t round_trips = 0;
    size_t clean = 0;                  ///< round trips no host delayed
    std::optional<double> fabric_p10;  ///< of the clean round trips, when enough to judge
    std::optional<double> fabric_p50;
    double a_wait = 0;       ///< the initiator's median wait for a CPU per round trip, seconds
    double b_wait = 0;       ///< the responder's
    size_t a_disturbed = 0;  ///< round trips the initiator's wait delayed
    size_t b_disturbed = 0;
    /// p10 of every round trip less both sides' waits for a CPU: what is left of a slow fabric
    /// when every round trip waited.
    std::optional<double> residual_p10;
  };
  /// Absent from a probe that could not tell (a kernel without scheduler statistics).
  std::optional<HostSplit> host;

  /// What slowness is judged on: the fastest tenth of the fabric's round trips, so a busy host
  /// is not a slow NIC while a NIC slow on every round trip is; without a host split, the
  /// fastest tenth of all (rtt_p10, else rtt_p50). None: fewer than half the round trips clean.
  /// On a host that delayed most of them, the few that escaped a measured wait were still
  /// slowed by what the waits do not show (the loopback's softirq work waiting its turn):
  /// measured under stress-ng, 6 clean of 50 gave a fabric p10 of 1.3 ms against 0.04 ms.
  std::optional<double> judged_rtt() const {
    if (!host) return rtt_p10 ? rtt_p10 : rtt_p50;
    return 2 * host->clean >= host->round_trips ? host->fabric_p10 : std::nullopt;
  }
};

/// kHostBusy: the pair passed but its hosts' waits for a CPU delayed too many of its round
/// trips to judge the fabric, and what its round trips leave less those waits is no slower
/// than the other busy pairs' (Localization::busy_median_residual).
enum class PairState { kOk, kSlow, kFailed, kHostBusy };
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

/// An agent whose host kept it waiting for a CPU: the pairs it made too busy to judge.
struct BusyHost {
  std::string agent;
  std::string host;
  size_t pairs = 0;  ///< its pairs in state kHostBusy through its own waits
  size_t of = 0;     ///< all its pairs
  double wait = 0;   ///< its median wait for a CPU per round trip over those pairs, seconds
};

struct Localization {
  /// The fabric's median round trip: over agents, of each agent's fastest judged pair round
  /// trip (so a few slow NICs, whose pairs may be most of the pairs, do not move it, nor does
  /// a busy host that left an agent one judged pair); 0 without one.
  double median_rtt = 0;
  /// The same median over the pairs too busy to judge, of their round trips less the hosts'
  /// waits (HostSplit::residual_p10); 0 without such pairs. Such a pair is slow when its own is
  /// above `slow_factor` times the larger of the two medians: against busy pairs of the same
  /// round, not against an idle fabric.
  double busy_median_residual = 0;
  std::vector<PairState> states;  ///< one per pair, in the order given
  std::vector<Suspect> suspects;
  /// Said, never a suspect: a busy host is not a slow NIC.
  std::vector<BusyHost> busy;
  /// Suspects not yet held for the rounds `--confirm` asks (SuspectConfirmation): said, not
  /// named.
  std::vector<Suspect> watching;
};

/// Turns a round's pair matrix into suspects, the way Pingmesh and R-Pingmesh reason (pairs
/// too host-busy to judge count neither way, and name their busy agents in `busy`): an
/// agent whose pairs fail or are slow against most of its peers (two at least) while the other
/// agents are fine with each other is the suspect; two or more suspects that are at least half
/// of the agents sharing a label (rail, switch, host) point at that label; a bad pair between
/// two agents that are otherwise fine is the link; when most of the fabric is bad no single
/// agent is named, the fabric is.
Localization localize(const std::vector<MonitoredAgent>& agents,
                      const std::vector<PairResult>& pairs, const LocalizationSettings& settings);

}  // namespace faultline::harness::monitor
