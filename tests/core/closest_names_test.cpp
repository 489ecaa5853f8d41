// "Did you mean": the known names closest to a mistyped one.
#include "faultline/core/closest_names.hpp"

#include <catch2/catch.hpp>

using faultline::closest_names;
using faultline::did_you_mean;

TEST_CASE("a mistyped name finds the closest known ones, and a far one finds none", "[unit]") {
  const std::vector<std::string> commands = {"run", "agent", "coordinator", "report", "bench"};
  CHECK(closest_names("rnu", commands) == std::vector<std::string>{"run"});
  CHECK(closest_names("reprot", commands) == std::vector<std::string>{"report"});
  CHECK(closest_names("xyzzy", commands).empty());
  const std::vector<std::string> ids = {"kv.push-pull", "kv.push-pull-inline-off",
                                        "tagged.eager-boundary", "pingpong"};
  // A part of an id finds every id holding it, before the merely close ones.
  CHECK(closest_names("push-pull", ids) ==
        std::vector<std::string>{"kv.push-pull", "kv.push-pull-inline-off"});
  CHECK(closest_names("kv.push-pul", ids).front() == "kv.push-pull");
  CHECK(closest_names("tagged.eager-boundry", ids, 1) ==
        std::vector<std::string>{"tagged.eager-boundary"});
}

TEST_CASE("the suggestion reads as a question", "[unit]") {
  CHECK(did_you_mean({}).empty());
  CHECK(did_you_mean({"run"}) == "did you mean run?");
  CHECK(did_you_mean({"a", "b", "c"}) == "did you mean a, b or c?");
}
