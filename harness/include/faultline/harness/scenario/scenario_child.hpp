#pragma once

#include <optional>

namespace faultline::harness {

/// The body of `faultline scenario-child --fd N`, the process an agent starts per scenario so
/// that a crash in the code under test kills only it. Reads one run_scenario message from
/// the socket `fd` (shared with the agent), runs it, answers with scenario_result. Returns
/// the exit code. A spare, started ahead at the lowest priority, takes `priority` back when
/// its scenario comes.
int run_scenario_child(int fd, std::optional<int> priority = std::nullopt);

}  // namespace faultline::harness
