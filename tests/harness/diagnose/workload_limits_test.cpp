// --limits files: formulas over inputs with their derivation, and problems that name the file,
// the field and what was expected.
#include "faultline/harness/diagnose/workload_limits.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "support/background_process.hpp"

using namespace faultline::harness::diagnose;
using faultline::testing::TempDir;

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
  CHECK_THAT(problem_of("not json"), Catch::Contains(path + ": expected a JSON document"));
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

TEST_CASE("an unknown key in a limits file is named, not ignored", "[unit]") {
  TempDir dir;
  const std::string file = dir.path() + "/typo.json";
  std::ofstream(file) << R"({"inputs": {"t": 1}, "endpont": {"send_depth": 4},
                            "endpoint": {"send_depth": "t"}})";
  auto loaded = load_workload(file);
  REQUIRE_FALSE(loaded.ok());
  CHECK_THAT(loaded.error().message, Catch::Contains(file + ": /endpont: unknown field"));
}

TEST_CASE("a limits file that nests, loops or is no file is refused, not a crash or a wait",
          "[unit]") {
  TempDir dir;
  const std::string path = dir.path() + "/w.json";
  // 100,000 parentheses overflowed the formula reader's stack; as many brackets the JSON's.
  std::ofstream(path) << R"({"inputs": {"n": 1}, "endpoint": {"send_depth": ")"
                      << std::string(100000, '(') << "n" << std::string(100000, ')') << "\"}}";
  auto deep_formula = load_workload(path);
  REQUIRE_FALSE(deep_formula.ok());
  CHECK_THAT(deep_formula.error().message, Catch::Contains("at most 64 parentheses"));
  std::ofstream(path) << std::string(100000, '[');
  auto deep_json = load_workload(path);
  REQUIRE_FALSE(deep_json.ok());
  CHECK_THAT(deep_json.error().message, Catch::Contains("at most 64 levels of nesting"));
  REQUIRE(mkfifo((dir.path() + "/fifo").c_str(), 0600) == 0);
  for (const auto& [file, why] : {std::pair{dir.path() + "/fifo", "a FIFO, not a file"},
                                  std::pair{std::string("/dev/zero"), "a character device"},
                                  std::pair{dir.path(), "a folder, not a file"}}) {
    auto loaded = load_workload(file);
    REQUIRE_FALSE(loaded.ok());
    CHECK_THAT(loaded.error().message, Catch::StartsWith(file + ": " + why));
  }
}
