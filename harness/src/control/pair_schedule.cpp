#include "faultline/harness/control/pair_schedule.hpp"

namespace faultline::harness {

std::vector<std::vector<AgentPair>> pair_rounds(size_t agents) {
  std::vector<std::vector<AgentPair>> rounds;
  if (agents < 2) return rounds;
  // With an odd count a phantom agent joins; whoever is paired with it rests that round.
  const size_t slots = agents % 2 == 0 ? agents : agents + 1;
  std::vector<size_t> circle(slots);
  for (size_t i = 0; i < slots; ++i) circle[i] = i;
  for (size_t round = 0; round + 1 < slots; ++round) {
    std::vector<AgentPair> pairs;
    for (size_t i = 0; i < slots / 2; ++i) {
      const size_t a = circle[i];
      const size_t b = circle[slots - 1 - i];
      if (a < agents && b < agents) pairs.emplace_back(std::min(a, b), std::max(a, b));
    }
    rounds.push_back(std::move(pairs));
    // Keep the first seat, rotate the others by one.
    const size_t last = circle[slots - 1];
    for (size_t i = slots - 1; i > 1; --i) circle[i] = circle[i - 1];
    circle[1] = last;
  }
  return rounds;
}

}  // namespace faultline::harness
