#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "faultline/harness/coordinator.hpp"
#include "faultline/harness/report_document.hpp"
#include "faultline/harness/scenario/scenario.hpp"
#include "faultline/reports/metrics.hpp"

namespace faultline::harness {

/// A run on this machine: a coordinator on 127.0.0.1 and `agents` agent processes (this
/// binary again) on `metadata.target`, as `faultline run` and `faultline diagnose` do it.
struct LocalRun {
  CoordinatorOptions options;  ///< listen, token and agents are set by run_locally
  size_t agents = 2;
  std::string report_dir;
  /// Where progress and the summary table go.
  std::ostream* out = nullptr;
  reports::Metrics* metrics = nullptr;
};

/// Runs `scenarios` (run_suite) on local agents, then shuts them down. Returns run_suite's
/// exit code, or kExitHarnessError when the coordinator cannot listen or the agents do not
/// join (said on stderr, prefixed with `command`).
int run_locally(const std::string& command, LocalRun run,
                const std::vector<ScenarioSpec>& scenarios, const RunMetadata& metadata);

/// The path of the running binary (/proc/self/exe), or "faultline".
std::string own_executable();

}  // namespace faultline::harness
