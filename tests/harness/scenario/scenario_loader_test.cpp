// The scenario loader on malformed files: every problem names the file, the JSON pointer of the
// field and what was expected there.
#include "faultline/harness/scenario/scenario_loader.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "faultline/harness/scenario/scenario_catalog.hpp"

using faultline::harness::load_scenario_file;
using faultline::harness::LoadProblem;

namespace {

const std::string kData = FAULTLINE_TEST_DATA_DIR;

struct Malformed {
  const char* name;
  const char* pointer;
  const char* expected;
};

// Each file is valid-base.json with one thing wrong.
const Malformed kMalformed[] = {
    {"bad-json", "", "does not parse at line 4"},
    {"not-an-object", "", "an object"},
    {"missing-id", "/id", "(required, missing)"},
    {"bad-id", "/id", "matching ^[a-z0-9]"},
    {"title-not-string", "/title", "a string; got 5"},
    {"unknown-op", "/steps/5/op", "a step op ("},
    {"unknown-fault-kind", "/faults/0/kind", "one of rewrite_status"},
    {"unknown-fault-key", "/faults/0/rnak", "a key of kind rewrite_status (kind, role, rank, "},
    {"fault-key-not-applied", "/faults/0/qp_error",
     "not applied to faultline's own endpoints (scenario files) (use a modify_to_error step"},
    {"step-role-unknown", "/steps/5/role", "one of the scenario's roles"},
    {"fault-role-unknown", "/faults/0/role", "one of the scenario's roles"},
    {"missing-roles", "/roles", "(required, missing)"},
    {"one-role", "/roles", "two roles for a pair scenario; got 1"},
    {"wr-id-not-integer", "/steps/5/wr_id", "an integer, >= 0; got \"one\""},
    {"unknown-step-field", "/steps/5/bogus", "no field \"bogus\" here"},
    {"unknown-status", "/steps/7/expect/status", "one of SUCCESS"},
    {"unknown-fault-opcode", "/faults/0/opcode", "one of SEND"},
    {"rewrite-without-status", "/faults/0/status", "(required, missing)"},
    {"fault-without-firing-rule", "/faults/0", "nth or every or probability"},
    {"fault-nth-and-every", "/faults/0",
     "exactly one of the fields nth, every or probability; got nth and every"},
    {"unknown-buffer", "/steps/5/segments/0/buffer", "a buffer registered by role sender"},
    {"negative-bytes", "/steps/1/bytes", ">= 1"},
    {"unknown-profile", "/faults/0/profile", "a device profile"},
    {"connect-one-role", "/steps/3", "a connect for every role"},
    {"duplicate-key", "/title", "each key once in an object; \"title\" appears twice"},
    {"number-overflow", "/steps/1/bytes", "a number a double can hold; got 1e400 at line"},
    {"remote-buffer-of-nobody", "/steps/6/remote/buffer", "registered by the peer"},
    {"steps-empty", "/steps", "at least 1 items"},
    {"derivation-contradicts-value", "/steps/0/derivations/send_depth",
     "a derivation that gives config.send_depth (196609); \"3 x max_tokens_per_rank 65536 + 2\" "
     "gives 196610"},
};

faultline::harness::LoaderOptions options() {
  return {faultline::harness::default_scenario_dir() + "/devices"};
}

}  // namespace

TEST_CASE("the base of the malformed files is valid", "[unit]") {
  std::vector<LoadProblem> problems;
  auto spec = load_scenario_file(kData + "/valid-base.json", options(), problems);
  for (const auto& problem : problems) INFO(problem.describe());
  REQUIRE(problems.empty());
  REQUIRE(spec.has_value());
  CHECK(spec->id == "test.base");
  CHECK(spec->roles == std::vector<std::string>{"receiver", "sender"});
  CHECK(spec->sha256.size() == 64);
}

TEST_CASE("each malformed scenario file names its file, pointer and expectation", "[unit]") {
  STATIC_REQUIRE(sizeof(kMalformed) / sizeof(kMalformed[0]) >= 15);
  for (const auto& bad : kMalformed) {
    const std::string file = kData + "/malformed/" + bad.name + ".json";
    CAPTURE(file);
    std::vector<LoadProblem> problems;
    CHECK_FALSE(load_scenario_file(file, options(), problems).has_value());
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].file == file);
    CHECK(problems[0].pointer == bad.pointer);
    CHECK_THAT(problems[0].expected, Catch::Contains(bad.expected));
    CHECK_THAT(problems[0].describe(),
               Catch::StartsWith(file + ": " + (*bad.pointer ? bad.pointer : "(document)")));
  }
}

TEST_CASE("every scenario file in scenarios/ loads, with unique ids", "[unit]") {
  std::vector<LoadProblem> problems;
  const auto catalog = faultline::harness::ScenarioCatalog::load(
      faultline::harness::default_scenario_dir(), problems);
  for (const auto& problem : problems) INFO(problem.describe());
  CHECK(problems.empty());
  size_t files = 0;
  for (const auto& spec : catalog.scenarios()) files += spec.source != "builtin" ? 1 : 0;
  CHECK(files >= 20);
  for (const char* tag : {"inline", "segments", "completion-error", "queue-depth"}) {
    CAPTURE(tag);
    size_t tagged = 0;
    for (const auto& spec : catalog.scenarios())
      tagged += std::count(spec.tags.begin(), spec.tags.end(), tag);
    CHECK(tagged >= 3);
  }
}

TEST_CASE("a suite naming an unknown scenario is a problem naming the suite file", "[unit]") {
  std::vector<LoadProblem> problems;
  const auto catalog = faultline::harness::ScenarioCatalog::load(
      faultline::harness::default_scenario_dir(), problems);
  std::vector<faultline::harness::ExcludeEntry> excludes;
  auto none = catalog.resolve("smoke", {"no.such.*"}, excludes, problems);
  CHECK(none.empty());
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0].expected, Catch::Contains("no scenario matches \"no.such.*\""));
  problems.clear();
  auto faults = catalog.resolve("faults", {}, excludes, problems);
  CHECK(problems.empty());
  CHECK(faults.size() >= 20);
  CHECK_FALSE(excludes.empty());
}

TEST_CASE("a scenario nested deeper than 64 levels is a problem, not a crash", "[unit]") {
  const std::string deep =
      R"({"id":"deep","steps":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  std::vector<LoadProblem> problems;
  CHECK_FALSE(faultline::harness::load_scenario_text("deep.json", deep, {}, problems));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].describe() ==
        "deep.json: (document): expected a scenario nesting at most 64 levels; it nests 100001");
}

TEST_CASE("a scenario too large for one control frame is refused when it loads", "[unit]") {
  // Sent anyway, it once made the agent drop its connection: every later scenario was lost.
  std::ifstream base(kData + "/valid-base.json");
  nlohmann::json document = nlohmann::json::parse(base);
  document["steps"][0]["note"] = std::string(1100000, 'x');
  std::vector<LoadProblem> problems;
  CHECK_FALSE(
      faultline::harness::load_scenario_text("huge.json", document.dump(), options(), problems));
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0].describe(),
             Catch::Contains("huge.json: (document): expected a scenario of at most 983040 bytes "
                             "as sent to the agents"));
}

TEST_CASE("a scenario asking one role for more memory than the bound is refused before it runs",
          "[unit]") {
  // 64 buffers of 1 GiB validated once, and the child was OOM-killed as if the code crashed.
  std::ifstream base(kData + "/valid-base.json");
  nlohmann::json document = nlohmann::json::parse(base);
  for (int i = 0; i < 64; ++i) {
    const nlohmann::json step = {{"op", "register"},
                                 {"role", "sender"},
                                 {"buffer", "big" + std::to_string(i)},
                                 {"bytes", 1U << 30}};
    document["steps"].insert(document["steps"].begin() + 1, step);
  }
  std::vector<LoadProblem> problems;
  faultline::harness::LoaderOptions bounded = options();
  bounded.max_memory_bytes = 8ULL << 30;
  CHECK_FALSE(
      faultline::harness::load_scenario_text("big.json", document.dump(), bounded, problems));
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0].describe(),
             Catch::Contains("expected at most 8589934592 bytes of memory for role sender in the "
                             "whole scenario") &&
                 Catch::Contains("its steps ask for 6871" /* 64 GiB and the base's bytes */));
  // Raised, the same file loads.
  problems.clear();
  bounded.max_memory_bytes = 128ULL << 30;
  CHECK(faultline::harness::load_scenario_text("big.json", document.dump(), bounded, problems));
}
