#include "faultline/core/json_depth.hpp"

#include <catch2/catch.hpp>

using faultline::json_nesting_depth;

TEST_CASE("nesting depth counts arrays and objects, not brackets inside strings", "[unit]") {
  CHECK(json_nesting_depth("42") == 0);
  CHECK(json_nesting_depth("{}") == 1);
  CHECK(json_nesting_depth(R"({"a":[1,{"b":[]}],"c":{}})") == 4);
  CHECK(json_nesting_depth(R"({"text":"[[[{{{"})") == 1);
  CHECK(json_nesting_depth(R"({"text":"quote \" then [[[ and \\","x":[[]]})") == 3);
  CHECK(json_nesting_depth(std::string(1000, '[')) == 1000);  // unclosed still counts
  CHECK(json_nesting_depth("]]]}}[") == 1);                   // stray closers do not go below 0
}
