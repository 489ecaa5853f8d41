#include "faultline/harness/control/pair_schedule.hpp"

#include <catch2/catch.hpp>
#include <set>

using faultline::harness::AgentPair;
using faultline::harness::pair_rounds;

TEST_CASE("pair rounds cover every pair once, in disjoint rounds", "[unit]") {
  for (size_t agents = 2; agents <= 17; ++agents) {
    CAPTURE(agents);
    const auto rounds = pair_rounds(agents);
    CHECK(rounds.size() == (agents % 2 == 0 ? agents - 1 : agents));
    std::set<AgentPair> seen;
    for (const auto& round : rounds) {
      std::set<size_t> busy;
      for (const auto& [a, b] : round) {
        CHECK(a < b);
        CHECK(b < agents);
        CHECK(busy.insert(a).second);
        CHECK(busy.insert(b).second);
        CHECK(seen.insert({a, b}).second);
      }
      CHECK(round.size() == agents / 2);  // an odd count rests exactly one agent
    }
    CHECK(seen.size() == agents * (agents - 1) / 2);
  }
  CHECK(pair_rounds(1).empty());
}

TEST_CASE("each round is computed on its own, as the turning circle makes it", "[unit]") {
  // The circle method step by step: seat 0 stays, the others turn one seat per round.
  for (size_t agents : {2, 5, 8, 13}) {
    CAPTURE(agents);
    const size_t slots = agents % 2 == 0 ? agents : agents + 1;
    std::vector<size_t> circle(slots);
    for (size_t i = 0; i < slots; ++i) circle[i] = i;
    for (size_t round = 0; round + 1 < slots; ++round) {
      std::vector<AgentPair> expected;
      for (size_t i = 0; i < slots / 2; ++i) {
        const size_t a = circle[i];
        const size_t b = circle[slots - 1 - i];
        if (a < agents && b < agents) expected.emplace_back(std::min(a, b), std::max(a, b));
      }
      CHECK(faultline::harness::pair_round(agents, round) == expected);
      const size_t last = circle[slots - 1];
      for (size_t i = slots - 1; i > 1; --i) circle[i] = circle[i - 1];
      circle[1] = last;
    }
  }
  // The last round of 8,192 agents, without the 33.5 million pairs before it.
  const auto last = faultline::harness::pair_round(8192, 8190);
  CHECK(faultline::harness::pair_round_count(8192) == 8191);
  CHECK(last.size() == 4096);
  std::set<size_t> busy;
  for (const auto& [a, b] : last) CHECK((busy.insert(a).second && busy.insert(b).second));
}
