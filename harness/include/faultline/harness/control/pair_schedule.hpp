#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace faultline::harness {

using AgentPair = std::pair<size_t, size_t>;

/// Rounds of disjoint pairs that together cover every pair of `agents` exactly once (the
/// circle method): N-1 rounds for an even N, N rounds with one agent resting each round for
/// an odd N. An all-pairs scan then costs about N-1 scenario times, not N^2/2.
std::vector<std::vector<AgentPair>> pair_rounds(size_t agents);

}  // namespace faultline::harness
