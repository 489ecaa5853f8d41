#include "faultline/harness/control/pair_schedule.hpp"

#include <algorithm>

namespace faultline::harness {

namespace {

// With an odd count a phantom agent joins; whoever is paired with it rests that round.
size_t seats(size_t agents) { return agents % 2 == 0 ? agents : agents + 1; }

}  // namespace

size_t pair_round_count(size_t agents) { return agents < 2 ? 0 : seats(agents) - 1; }

std::vector<AgentPair> pair_round(size_t agents, size_t round) {
  // Seat 0 keeps its agent; the others turn one seat per round, so in round r seat i >= 1
  // holds agent 1 + (i - 1 - r) mod (seats - 1). Seat i meets seat seats - 1 - i.
  const size_t slots = seats(agents);
  const size_t turning = slots - 1;
  const auto at = [&](size_t seat) {
    return seat == 0 ? 0 : 1 + (seat - 1 + turning - round % turning) % turning;
  };
  std::vector<AgentPair> pairs;
  pairs.reserve(slots / 2);
  for (size_t i = 0; i < slots / 2; ++i) {
    const size_t a = at(i);
    const size_t b = at(slots - 1 - i);
    if (a < agents && b < agents) pairs.emplace_back(std::min(a, b), std::max(a, b));
  }
  return pairs;
}

std::vector<std::vector<AgentPair>> pair_rounds(size_t agents) {
  std::vector<std::vector<AgentPair>> rounds;
  for (size_t round = 0; round < pair_round_count(agents); ++round)
    rounds.push_back(pair_round(agents, round));
  return rounds;
}

}  // namespace faultline::harness
