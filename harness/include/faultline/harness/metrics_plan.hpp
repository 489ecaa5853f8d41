#pragma once

#include <string>
#include <vector>

#include "faultline/reports/metrics.hpp"

namespace faultline::harness {

/// This build, for faultline_build_info: its version and the transports compiled in.
reports::BuildInfo build_info();

/// What a run of `scenarios` will count, with every value each label can take (verdicts,
/// completion statuses, fault kinds, opcodes), so its counters exist at 0 before the first
/// scenario ends.
reports::MetricsPlan metrics_plan(const std::vector<std::string>& scenarios, bool sut = false);

}  // namespace faultline::harness
