#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "faultline/harness/base/scenario_spec.hpp"
#include "faultline/harness/control/coordinator.hpp"
#include "faultline/harness/monitor/localization.hpp"

namespace faultline::reports {
class Metrics;
class MonitorMetrics;
}  // namespace faultline::reports

namespace faultline::harness::monitor {

/// What `faultline monitor` does (docs/monitoring.md).
struct MonitorOptions {
  std::vector<ScenarioSpec> scenarios;  ///< each round's probes (default: the built-in probe)
  std::string suite = "pingmesh";
  uint64_t seed = 0;
  std::chrono::milliseconds every{60000};  ///< from the start of one round to the next
  std::string report_dir = "faultline-monitor";
  size_t keep_rounds = 1440;  ///< round reports kept in report_dir/rounds/
  LocalizationSettings localization;
  size_t rounds = 0;  ///< stop after this many rounds; 0: until `stop`
};

/// Each probe's deadline for the next round, from what the last one measured: ten times its
/// slowest passing run, at least 2 s, at most as `given` (the configured). A peer that
/// heartbeats but never answers a probe then holds each of its pairs seconds, not the
/// configured 30 s each. A probe with no passing run keeps its deadline.
void adapt_probe_deadlines(std::vector<ScenarioSpec>& scenarios,
                           const std::vector<ScenarioSpec>& given,
                           const std::vector<ScenarioRun>& runs);

/// Runs rounds on `coordinator` (listening, open membership) every `options.every` until `stop`
/// or `options.rounds`: each round runs the probes over the pairs of the coordinator's
/// --pairs (rounds of disjoint pairs, so no NIC probes two peers at once), localizes the
/// suspects, writes the round's report (report.json's form with a `monitor` section) into
/// report_dir/rounds/ and latest.json, and counts it into `metrics` (may be null). A round
/// with fewer than two agents is still a round, with nothing probed. Round numbers continue
/// from the reports a previous monitor left in report_dir. Returns the exit code: 0, or 3
/// when a round's report cannot be written, 2 when report_dir is another monitor's.
int run_monitor(Coordinator& coordinator, const MonitorOptions& options,
                reports::MonitorMetrics* metrics, const std::atomic<bool>& stop);

}  // namespace faultline::harness::monitor
