// --limits files: formulas over inputs with their derivation, and problems that name the file,
// the field and what was expected.
#include "faultline/harness/diagnose/workload_limits.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "support/background_process.hpp"

using namespace faultline::harness::diagnose;
using faultline::testing::TempDir;

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

TEST_CASE("the DeepEP workload file gives send_depth 196609 with its derivation", "[unit]") {
  auto workload = load_workload(FAULTLINE_TEST_DIAGNOSE_DIR "/deepep-limits.json");
  REQUIRE(workload.ok());
  CHECK(workload->name == "DeepEP hybrid-ep under Megatron-LM");
  CHECK(workload->config.send_depth == 196609);
  CHECK(workload->config.recv_depth == 1024);
  CHECK(workload->config.derivations.at("send_depth") == "3 x max_tokens_per_rank 65536 + 1");
  CHECK(workload->device_limits.at("max_qp_wr") == 65535);
}

TEST_CASE("a bad workload file names the file, the field and what was expected", "[unit]") {
  TempDir dir;
  const std::string path = dir.path() + "/w.json";
  auto problem_of = [&](const std::string& text) {
    std::ofstream(path) << text;
    auto loaded = load_workload(path);
    REQUIRE_FALSE(loaded.ok());
    return loaded.error().message;
  };
  CHECK_THAT(problem_of(R"({"endpoint": {"send_deep": 4}})"),
             Catch::Contains(path + ": /endpoint/send_deep: unknown field"));
  CHECK_THAT(problem_of(R"({"endpoint": {"send_depth": "2 * x"}})"),
             Catch::Contains("/endpoint/send_depth: unknown input 'x'"));
  CHECK_THAT(problem_of(R"({"endpoint": {"send_depth": true}})"),
             Catch::Contains("/endpoint/send_depth: expected a count or a formula"));
  CHECK_THAT(problem_of(R"({"inputs": {"n": -1}, "endpoint": {"send_depth": 1}})"),
             Catch::Contains("/inputs/n: expected a count"));
  CHECK_THAT(problem_of(R"({"endpoint": {"send_depth": 1}, "device_limits": {"max_qq": 2}})"),
             Catch::Contains("/device_limits/max_qq"));
  CHECK_THAT(problem_of("not json"), Catch::Contains("expected a JSON object"));
  CHECK_THAT(problem_of("{}"), Catch::Contains("/endpoint: expected an object"));
}
