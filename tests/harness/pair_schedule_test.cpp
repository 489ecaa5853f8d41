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
