// The built-in `probe`: what `faultline monitor` runs over each pair every round.
#pragma once

#include "faultline/harness/scenario/builtin_scenarios.hpp"

namespace faultline::harness {

/// Connects, times `round_trips` (params, default 50) 64-byte send/recv round trips, then a
/// burst of RDMA writes (`burst_bytes`, default 4 MiB, in 256 KiB writes), every byte checked.
/// Each side counts how long it waited for a CPU in each round trip (RunQueueClock) and sends
/// that to the initiator, whose details hold `probe`: the round trips' p10, p50, p99, min and
/// max, each side's waits, the fabric's round trips (those neither side's host delayed:
/// round_trip_measurements) and the burst's time. The agent's own faults (`agent_faults`, from its
/// --fault-file) are applied to its side, and its traffic and port counters recorded, as for
/// scenario files.
ScenarioOutcome run_probe(ScenarioContext& context);

}  // namespace faultline::harness
