#pragma once

#include <cstdint>

#include "faultline/core/status.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"

namespace faultline::harness::bench {

struct ControlPlaneOptions {
  transports::Target target;
  size_t agents = 16;     ///< for the all-pairs schedule
  size_t barriers = 200;  ///< steps of the timed scenario
  size_t repetitions = 5;
};

struct ControlPlaneResult {
  /// One coordinator round trip per step: a barrier step goes scenario child -> agent ->
  /// coordinator and back. The median, over repetitions, of (a run of 1 + `barriers` barriers
  /// minus a run of 1 barrier) / `barriers`.
  double step_round_trip_ms = 0;
  double run_without_steps_ms = 0;  ///< median of the 1-barrier run: the fixed cost of a run
  size_t agents = 0;
  double join_seconds = 0;  ///< from starting the agent processes to all of them joined
  size_t pair_runs = 0;     ///< agents x (agents - 1) / 2
  double all_pairs_seconds = 0;
};

/// Times the control plane on local agents with scenarios that move no data.
Result<ControlPlaneResult> run_control_plane(const ControlPlaneOptions& options);

}  // namespace faultline::harness::bench
