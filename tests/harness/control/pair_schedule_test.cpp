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

namespace {

using faultline::harness::PairPlan;
using faultline::harness::PairRounds;

// Every round's pairs, checked disjoint within the round.
std::vector<AgentPair> all_pairs(const PairRounds& rounds, size_t agents) {
  std::vector<AgentPair> pairs;
  for (size_t round = 0; round < rounds.count(); ++round) {
    std::set<size_t> busy;
    for (const auto& [a, b] : rounds.round(round)) {
      CHECK(a < b);
      CHECK(b < agents);
      CHECK(busy.insert(a).second);
      CHECK(busy.insert(b).second);
      pairs.emplace_back(a, b);
    }
  }
  CHECK(pairs.size() == rounds.pair_count());
  return pairs;
}

PairPlan plan(const std::string& text) { return faultline::harness::parse_pair_plan(text).value(); }

}  // namespace

TEST_CASE("pairs: --pairs ring pairs each agent with the next, closing the ring", "[unit]") {
  for (size_t agents = 2; agents <= 9; ++agents) {
    CAPTURE(agents);
    const PairRounds rounds(plan("ring"), std::vector<std::string>(agents), 1);
    const auto pairs = all_pairs(rounds, agents);
    std::set<AgentPair> expected;
    for (size_t i = 0; i < agents; ++i)
      expected.insert({std::min(i, (i + 1) % agents), std::max(i, (i + 1) % agents)});
    CHECK(std::set<AgentPair>(pairs.begin(), pairs.end()) == expected);
    CHECK(pairs.size() == expected.size());  // none twice
    CHECK(rounds.count() <= 3);
  }
}

TEST_CASE("pairs: --pairs rail pairs every two agents of a rail and never two rails", "[unit]") {
  const std::vector<std::string> rails = {"r0", "r1", "r0", "r1", "r0", "r2", "r1", "r0"};
  const PairRounds rounds(plan("rail"), rails, 1);
  const auto pairs = all_pairs(rounds, rails.size());
  std::set<AgentPair> expected;
  for (size_t a = 0; a < rails.size(); ++a)
    for (size_t b = a + 1; b < rails.size(); ++b)
      if (rails[a] == rails[b]) expected.insert({a, b});
  CHECK(std::set<AgentPair>(pairs.begin(), pairs.end()) == expected);
  CHECK(pairs.size() == expected.size());
  CHECK(rounds.count() == 3);  // rail r0 has 4 agents: 3 rounds; r1's 3 agents also take 3
}

TEST_CASE("pairs: --pairs sample:N gives every agent a partner in each of N rounds, seeded",
          "[unit]") {
  const PairRounds rounds(plan("sample:4"), std::vector<std::string>(10), 42);
  CHECK(rounds.count() == 4);
  const auto pairs = all_pairs(rounds, 10);
  CHECK(pairs.size() == 4 * 5);
  CHECK(PairRounds(plan("sample:4"), std::vector<std::string>(10), 42).round(2) == rounds.round(2));
  CHECK(PairRounds(plan("sample:4"), std::vector<std::string>(10), 43).round(2) != rounds.round(2));
  CHECK(PairRounds(plan("sample:1"), std::vector<std::string>(7), 1).round(0).size() == 3);
}

TEST_CASE("pairs: --pairs all is the circle method's schedule", "[unit]") {
  const PairRounds rounds(plan("all"), std::vector<std::string>(6), 1);
  CHECK(rounds.count() == 5);
  CHECK(all_pairs(rounds, 6).size() == 15);
}

TEST_CASE("pairs: --pairs refuses what it does not know, naming what it expects", "[unit]") {
  for (const char* bad : {"", "pairs", "sample", "sample:", "sample:0", "sample:-1", "sample:x",
                          "sample:1234567", "Ring"}) {
    CAPTURE(bad);
    auto parsed = faultline::harness::parse_pair_plan(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK_THAT(parsed.error().message, Catch::Contains("all, ring, rail or sample:N"));
  }
  CHECK(plan("sample:12").sample_rounds == 12);
  CHECK(plan("sample:12").text() == "sample:12");
}
