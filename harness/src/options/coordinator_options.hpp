// Options of the commands that run a coordinator: coordinator, run, monitor.
#pragma once

#include <CLI/CLI.hpp>

#include "faultline/harness/control/coordinator.hpp"

namespace faultline::cli {

/// --step-timeout SECONDS: the longest one step of a scenario side may take.
void add_step_timeout(CLI::App* command, harness::CoordinatorOptions& options);

/// --pairs all|ring|rail|sample:N: which pairs a pair scenario runs on.
void add_pairs(CLI::App* command, harness::CoordinatorOptions& options);

}  // namespace faultline::cli
