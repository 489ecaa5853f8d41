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
  REQUIRE(workload->endpoints.size() == 1);
  const auto& config = workload->endpoints[0].config;
  CHECK(config.send_depth == 196609);
  CHECK(config.recv_depth == 1024);
  CHECK(config.derivations.at("send_depth") == "3 x max_tokens_per_rank 65536 + 1");
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
  CHECK_THAT(problem_of("{}"), Catch::Contains("/endpoint: expected one endpoint object"));
  CHECK_THAT(problem_of(R"({"endpoint": {"send_depth": 1}, "endpoints": {}})"),
             Catch::Contains("(not both)"));
  CHECK_THAT(problem_of(R"({"endpoints": {"combine": {"send_depht": 1}}})"),
             Catch::Contains("/endpoints/combine/send_depht: unknown field"));
}

TEST_CASE("one limits file describes DeepEP's dispatch and combine endpoints together", "[unit]") {
  auto workload =
      load_workload(FAULTLINE_SOURCE_DIR "/examples/limits/deepep-dispatch-combine.json");
  REQUIRE(workload.ok());
  REQUIRE(workload->endpoints.size() == 2);
  const auto& combine = workload->endpoints[0];  // by name: combine, dispatch
  const auto& dispatch = workload->endpoints[1];
  CHECK(dispatch.name == "dispatch");
  CHECK(dispatch.config.send_depth == 3 * 65536 + 1);
  CHECK(combine.name == "combine");
  CHECK(combine.config.send_depth == 2 * 65536 + 1);
  CHECK(combine.config.derivations.at("send_depth") == "2 x max_tokens_per_rank 65536 + 1");
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

TEST_CASE("an unknown key in a limits file is named, not ignored", "[unit]") {
  TempDir dir;
  const std::string file = dir.path() + "/typo.json";
  std::ofstream(file) << R"({"inputs": {"t": 1}, "endpont": {"send_depth": 4},
                            "endpoint": {"send_depth": "t"}})";
  auto loaded = load_workload(file);
  REQUIRE_FALSE(loaded.ok());
  CHECK_THAT(loaded.error().message, Catch::Contains(file + ": /endpont: unknown field"));
}
