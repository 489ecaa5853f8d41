#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "faultline/core/status.hpp"

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

/// Which pairs a pair scenario runs on (`--pairs`): every pair; each agent with the next in
/// join order (a ring of pairs); every pair within a rail (agents with the same `--rail`
/// label); or `sample:N`, N rounds each pairing every agent with a random partner (seeded by
/// the run's seed, so a replay pairs the same way).
struct PairPlan {
  enum class Mode { kAll, kRing, kRail, kSample };
  Mode mode = Mode::kAll;
  size_t sample_rounds = 0;  ///< kSample: N
  std::string text() const;  ///< "all", "ring", "rail", "sample:4"
};

/// "all", "ring", "rail" or "sample:N" (N >= 1); a usage error names what was expected.
Result<PairPlan> parse_pair_plan(const std::string& text);

/// The rounds of disjoint pairs of a plan over agents 0..N-1 (`rails[i]`: agent i's label),
/// each round computed when asked.
class PairRounds {
 public:
  PairRounds(PairPlan plan, std::vector<std::string> rails, uint64_t seed);
  size_t count() const;
  std::vector<AgentPair> round(size_t round) const;
  /// How many pairs all rounds hold together.
  size_t pair_count() const;

 private:
  PairPlan plan_;
  std::vector<std::string> rails_;
  uint64_t seed_;
  std::vector<std::vector<size_t>> rail_members_;  // kRail: the agents of each rail
};

}  // namespace faultline::harness
