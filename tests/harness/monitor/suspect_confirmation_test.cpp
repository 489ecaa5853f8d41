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
