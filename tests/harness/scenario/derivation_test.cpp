// Formulas over named inputs and their derivations (a scenario's `derivations`, diagnose's
// workload files): evaluated, shown with their values, and refused where they break.
#include "faultline/harness/scenario/derivation.hpp"

#include <catch2/catch.hpp>

using faultline::harness::evaluate_derivation;
using faultline::harness::evaluate_formula;

TEST_CASE("a formula is evaluated over the inputs, and shown with their values", "[unit]") {
  auto evaluated =
      evaluate_formula("3 * max_tokens_per_rank + 1", {{"max_tokens_per_rank", 65536}});
  REQUIRE(evaluated.ok());
  CHECK(evaluated->value == 196609);
  CHECK(evaluated->derivation == "3 x max_tokens_per_rank 65536 + 1");
  auto grouped = evaluate_formula("(a + 2) * b / 4 - 1", {{"a", 6}, {"b", 3}});
  REQUIRE(grouped.ok());
  CHECK(grouped->value == 5);
  CHECK(grouped->derivation == "(a 6 + 2) x b 3 / 4 - 1");
}

TEST_CASE("a bad formula says what was expected where", "[unit]") {
  auto unknown = evaluate_formula("3 * tokens", {{"max_tokens_per_rank", 1}});
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.error().message,
             Catch::Contains("unknown input 'tokens' (inputs: max_tokens_per_rank)"));
  CHECK_FALSE(evaluate_formula("3 *", {}).ok());
  CHECK_FALSE(evaluate_formula("(1 + 2", {}).ok());
  CHECK_FALSE(evaluate_formula("1 - 2", {}).ok());  // a depth is never negative
  CHECK_FALSE(evaluate_formula("4 / 0", {}).ok());
  auto trailing = evaluate_formula("1 2", {});
  REQUIRE_FALSE(trailing.ok());
  CHECK_THAT(trailing.error().message, Catch::Contains("at character 3"));
}

TEST_CASE("formula arithmetic that leaves 64 bits is an error, not a wrapped value", "[unit]") {
  // t*t+16 with t = 2^32 once passed as 16.
  auto squared = evaluate_formula("t * t + 16", {{"t", 4294967296ULL}});
  REQUIRE_FALSE(squared.ok());
  CHECK_THAT(squared.error().message, Catch::Contains("product overflows"));
  auto summed = evaluate_formula("t + t", {{"t", 18446744073709551615ULL}});
  REQUIRE_FALSE(summed.ok());
  CHECK_THAT(summed.error().message, Catch::Contains("sum overflows"));
  auto literal = evaluate_formula("99999999999999999999 + 1", {});
  REQUIRE_FALSE(literal.ok());
  CHECK_THAT(literal.error().message, Catch::Contains("fits 64 bits"));
}

TEST_CASE("a derivation gives the value of the formula it shows", "[unit]") {
  CHECK(evaluate_derivation("3 x max_tokens_per_rank 65536 + 1").value() == 196609U);
  CHECK_FALSE(evaluate_derivation("3 x").ok());
}
