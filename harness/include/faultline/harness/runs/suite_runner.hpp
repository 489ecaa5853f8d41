#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/base/scenario_spec.hpp"
#include "faultline/harness/control/coordinator.hpp"
#include "faultline/harness/runs/report_document.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"
#include "faultline/reports/metrics.hpp"

namespace faultline::harness {

/// Runs `scenarios` on the coordinator's agents, printing progress to `out` (a live line on a
/// terminal, one line per scenario on a pipe) and a summary table at the end, and rewriting
/// `report_dir`/report.json, junit.xml and summary.md atomically after every scenario. Returns the
/// exit code: 0 all passed (or skipped), 1 a conformance failure (fail, crashed, timeout), 3 a
/// harness error.
/// With `metrics`, every finished run is also counted there.
int run_suite(Coordinator& coordinator, const std::vector<ScenarioSpec>& scenarios,
              const std::string& report_dir, const RunMetadata& metadata, std::ostream& out,
              reports::Metrics* metrics = nullptr);

/// The report of a run that ended before its first scenario (the agents never joined, a
/// wrong token among them): report.json, junit.xml and summary.md with none of `scenarios`
/// run and `run.not_run` saying why. Returns 3, or 2 when the directory is another run's.
int report_nothing_ran(const Coordinator& coordinator, const std::vector<ScenarioSpec>& scenarios,
                       const std::string& report_dir, const RunMetadata& metadata,
                       const std::string& why);

}  // namespace faultline::harness
