#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace faultline::harness {

using AgentPair = std::pair<size_t, size_t>;

/// How many rounds of disjoint pairs cover every pair of `agents` exactly once (the circle
/// method): N-1 for an even N, N for an odd N (one agent rests each round); 0 below 2.
size_t pair_round_count(size_t agents);

/// Round `round` (< pair_round_count) of that schedule, computed on its own: a schedule of
/// 8,192 agents has 33.5 million pairs, which the coordinator never holds at once.
std::vector<AgentPair> pair_round(size_t agents, size_t round);

/// Every round, in order (for tests and small meshes). An all-pairs scan then costs about N-1
/// scenario times, not N^2/2.
std::vector<std::vector<AgentPair>> pair_rounds(size_t agents);

}  // namespace faultline::harness
