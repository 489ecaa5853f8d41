// A suspect is named once it held for --confirm rounds in a row; until then it is watched, and a
// round without it starts it over.
#include "monitor/suspect_confirmation.hpp"

#include <catch2/catch.hpp>

using namespace faultline::harness::monitor;

namespace {

Localization round_naming(std::vector<std::string> agents) {
  Localization found;
  for (const auto& agent : agents)
    found.suspects.push_back({"agent", agent, "failed", "", {agent}});
  return found;
}

}  // namespace

TEST_CASE("a suspect is named after --confirm rounds in a row, watched before", "[unit]") {
  SuspectConfirmation confirmation(2);
  Localization first = round_naming({"n4"});
  confirmation.confirm(first);
  CHECK(first.suspects.empty());
  REQUIRE(first.watching.size() == 1);
  CHECK(first.watching[0].rounds == 1);
  Localization second = round_naming({"n4", "n2"});
  confirmation.confirm(second);
  REQUIRE(second.suspects.size() == 1);
  CHECK(second.suspects[0].name == "n4");
  CHECK(second.suspects[0].rounds == 2);
  CHECK(second.watching.size() == 1);  // n2, new this round
  // A round without n4 starts it over.
  Localization gap = round_naming({});
  confirmation.confirm(gap);
  Localization again = round_naming({"n4"});
  confirmation.confirm(again);
  CHECK(again.suspects.empty());
  CHECK(again.watching.size() == 1);
}

TEST_CASE("with --confirm 1 a suspect is named in its first round", "[unit]") {
  SuspectConfirmation confirmation(1);
  Localization found = round_naming({"n1"});
  confirmation.confirm(found);
  CHECK(found.suspects.size() == 1);
  CHECK(found.watching.empty());
}

TEST_CASE("a fault localized at another level from one round to the next is held on", "[unit]") {
  // Measured beside stress-ng: busy hosts hid some pairs, so the faulted rail's fault was a
  // slow link n3<->n4 in one round and rail1 (with agents n3 and n4) in the next; counted
  // apart, neither was named within two rounds.
  SuspectConfirmation confirmation(2);
  Localization link;
  link.suspects.push_back({"link", "n3<->n4", "slow", "", {"n3", "n4"}});
  confirmation.confirm(link);
  CHECK(link.suspects.empty());
  Localization rail;
  rail.suspects = {{"agent", "n3", "slow", "", {"n3"}},
                   {"agent", "n4", "slow", "", {"n4"}},
                   {"rail", "rail1", "slow", "", {"n3", "n4"}},
                   {"agent", "n5", "slow", "", {"n5"}},
                   {"agent", "n3", "failed", "", {"n3"}}};
  confirmation.confirm(rail);
  REQUIRE(rail.suspects.size() == 3);
  CHECK(rail.suspects[2].name == "rail1");
  CHECK(rail.suspects[2].rounds == 2);
  // n5 shares no agent with the link, and a failure is not the slowness it held on from.
  REQUIRE(rail.watching.size() == 2);
  CHECK(rail.watching[0].name == "n5");
  CHECK(rail.watching[1].reason == "failed");
}
