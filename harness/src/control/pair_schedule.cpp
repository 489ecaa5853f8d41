#include "faultline/harness/control/pair_schedule.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

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

std::string PairPlan::text() const {
  switch (mode) {
    case Mode::kAll: return "all";
    case Mode::kRing: return "ring";
    case Mode::kRail: return "rail";
    case Mode::kSample: return "sample:" + std::to_string(sample_rounds);
  }
  return "all";
}

Result<PairPlan> parse_pair_plan(const std::string& text) {
  if (text == "all") return PairPlan{PairPlan::Mode::kAll, 0};
  if (text == "ring") return PairPlan{PairPlan::Mode::kRing, 0};
  if (text == "rail") return PairPlan{PairPlan::Mode::kRail, 0};
  const std::string prefix = "sample:";
  if (text.starts_with(prefix)) {
    const std::string count = text.substr(prefix.size());
    if (!count.empty() && count.size() <= 6 &&
        std::all_of(count.begin(), count.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        std::stoul(count) > 0)
      return PairPlan{PairPlan::Mode::kSample, std::stoul(count)};
  }
  return Error{ErrorCode::kInvalidArgument,
               "--pairs '" + text + "': expected all, ring, rail or sample:N (N from 1 to 999999)"};
}

PairRounds::PairRounds(PairPlan plan, std::vector<std::string> rails, uint64_t seed)
    : plan_(plan), rails_(std::move(rails)), seed_(seed) {
  if (plan_.mode != PairPlan::Mode::kRail) return;
  std::map<std::string, size_t> rail_index;  // rails in the order their first agent joined
  for (size_t agent = 0; agent < rails_.size(); ++agent) {
    auto [found, added] = rail_index.emplace(rails_[agent], rail_members_.size());
    if (added) rail_members_.emplace_back();
    rail_members_[found->second].push_back(agent);
  }
}

size_t PairRounds::count() const {
  const size_t agents = rails_.size();
  if (agents < 2) return 0;
  switch (plan_.mode) {
    case PairPlan::Mode::kAll: return pair_round_count(agents);
    // Each agent with the next: 1 pair of 2, else 2 rounds (even), 3 (odd: the closing pair).
    case PairPlan::Mode::kRing: return agents == 2 ? 1 : (agents % 2 == 0 ? 2 : 3);
    case PairPlan::Mode::kRail: {
      size_t rounds = 0;
      for (const auto& members : rail_members_)
        rounds = std::max(rounds, pair_round_count(members.size()));
      return rounds;
    }
    case PairPlan::Mode::kSample: return plan_.sample_rounds;
  }
  return 0;
}

std::vector<AgentPair> PairRounds::round(size_t round) const {
  const size_t agents = rails_.size();
  std::vector<AgentPair> pairs;
  switch (plan_.mode) {
    case PairPlan::Mode::kAll: return pair_round(agents, round);
    case PairPlan::Mode::kRing:
      if (agents == 2) return {{0, 1}};
      if (round == 2) return {{0, agents - 1}};
      // Round 0: (0,1), (2,3), ...; round 1: (1,2), (3,4), ...; the pair closing an even ring
      // ((N-1, 0)) joins round 1.
      for (size_t i = round; i + 1 < agents; i += 2) pairs.emplace_back(i, i + 1);
      if (round == 1 && agents % 2 == 0) pairs.emplace_back(0, agents - 1);
      return pairs;
    case PairPlan::Mode::kRail:
      // Every rail's own round of the same number, side by side.
      for (const auto& members : rail_members_) {
        if (round >= pair_round_count(members.size())) continue;
        for (const auto& [a, b] : pair_round(members.size(), round))
          pairs.emplace_back(members[a], members[b]);
      }
      return pairs;
    case PairPlan::Mode::kSample: {
      std::vector<size_t> order(agents);
      std::iota(order.begin(), order.end(), size_t{0});
      std::mt19937_64 random(seed_ ^ (0x9e3779b97f4a7c15ULL * (round + 1)));
      std::shuffle(order.begin(), order.end(), random);
      for (size_t i = 0; i + 1 < agents; i += 2)
        pairs.emplace_back(std::min(order[i], order[i + 1]), std::max(order[i], order[i + 1]));
      return pairs;
    }
  }
  return pairs;
}

size_t PairRounds::pair_count() const {
  const size_t agents = rails_.size();
  if (agents < 2) return 0;
  switch (plan_.mode) {
    case PairPlan::Mode::kAll: return agents * (agents - 1) / 2;
    case PairPlan::Mode::kRing: return agents == 2 ? 1 : agents;
    case PairPlan::Mode::kRail: {
      size_t pairs = 0;
      for (const auto& members : rail_members_) pairs += members.size() * (members.size() - 1) / 2;
      return pairs;
    }
    case PairPlan::Mode::kSample: return plan_.sample_rounds * (agents / 2);
  }
  return 0;
}

}  // namespace faultline::harness
