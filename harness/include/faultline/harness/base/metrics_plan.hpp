#pragma once

#include <string>
#include <vector>

#include "faultline/reports/metrics.hpp"

namespace faultline::harness {

/// This build, for faultline_build_info: its version and the transports compiled in.
reports::BuildInfo build_info();

/// What a run of `scenarios` will count, with every value each label can take (verdicts,
/// completion statuses, fault kinds, opcodes), so its counters exist at 0 before the first
/// scenario ends. A run of SUT scenarios gives the verdicts its programs can reach.
reports::MetricsPlan metrics_plan(const std::vector<std::string>& scenarios,
                                  const std::vector<std::string>& sut_verdicts = {});

}  // namespace faultline::harness
