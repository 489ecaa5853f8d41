// Agent labels: which text names an agent, and the order agents are ranked in.
#include "faultline/harness/base/labels.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

using faultline::harness::label_less;

TEST_CASE("agents rank by name as people sort them: numbers by value", "[unit]") {
  std::vector<std::string> names = {"flnode.10", "flnode.2", "node",  "flnode.0", "local-1",
                                    "flnode.02", "flnode.1", "node1", "Node"};
  std::sort(names.begin(), names.end(), label_less);
  CHECK(names == std::vector<std::string>{"Node", "flnode.0", "flnode.1", "flnode.2", "flnode.02",
                                          "flnode.10", "local-1", "node", "node1"});
  CHECK_FALSE(label_less("a7", "a7"));
  CHECK(label_less("a7", "a7b"));
  CHECK_FALSE(label_less("a7b", "a7"));
  CHECK(label_less("rack2-n9", "rack10-n1"));
}
