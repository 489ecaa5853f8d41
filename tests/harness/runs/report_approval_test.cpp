// Approval tests: the report files of a fixed run (one pass, one fail, one skip, seed 1),
// normalized (times, durations, host, kernel, version, paths, pids, the agents' devices),
// must equal the baselines in tests/reports/baselines/. A change to a report format shows up
// as a diff here; FAULTLINE_UPDATE_BASELINES=1 rewrites the baselines after a deliberate one.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "../harness_test_paths.hpp"
#include "support/background_process.hpp"
#include "support/run_command.hpp"

using faultline::testing::read_text_file;
using faultline::testing::run_command;
using faultline::testing::TempDir;
using nlohmann::json;

namespace {

const std::string kBaselines = FAULTLINE_BASELINE_DIR;
const std::string kSourceDir = FAULTLINE_SOURCE_DIR;

std::string replace_all(std::string text, const std::string& pattern, const std::string& with) {
  return std::regex_replace(text, std::regex(pattern), with);
}

// What differs between machines and runs of the same thing, in any of the three files.
std::string normalize_text(std::string text) {
  text = replace_all(text, kSourceDir + "/", "<src>/");
  text = replace_all(text, R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)", "<time>");
  text = replace_all(text, R"(time="[0-9.]+")", "time=\"<s>\"");
  text = replace_all(text, R"(\| [0-9]+\.[0-9]{2} \|)", "| <s> |");
  text = replace_all(text, R"(hostname="[^"]*")", "hostname=\"<host>\"");
  text = replace_all(text, R"(name="kernel" value="[^"]*")", "name=\"kernel\" value=\"<kernel>\"");
  text = replace_all(text, R"(name="faultline_version" value="[^"]*")",
                     "name=\"faultline_version\" value=\"<version>\"");
  text = replace_all(text, R"(- faultline \S+ on .*)", "- faultline <version> on <host>");
  return text;
}

// `value` with each agent id in it, as a string or an object's key, replaced by `ids`'s word.
json with_ids_named(const json& value, const std::map<std::string, std::string>& ids) {
  if (value.is_string()) {
    const auto found = ids.find(value.get<std::string>());
    return found == ids.end() ? value : json(found->second);
  }
  if (value.is_array()) {
    json named = json::array();
    for (const auto& item : value) named.push_back(with_ids_named(item, ids));
    return named;
  }
  if (!value.is_object()) return value;
  json named = json::object();
  for (const auto& [key, item] : value.items()) {
    const auto found = ids.find(key);
    named[found == ids.end() ? key : found->second] = with_ids_named(item, ids);
  }
  return named;
}

std::string normalize_report(const std::string& text) {
  json report = json::parse(text);
  report["faultline_version"] = "<version>";
  json& run = report["run"];
  run["host"] = "<host>";
  run["kernel"] = "<kernel>";
  // Local agents are named local-1, local-2 and ranked by name; their ids are the order they
  // finished joining, which is timing: each id becomes its agent's name.
  std::map<std::string, std::string> ids;
  for (auto& agent : run["agents"]) {
    ids[agent["id"]] = "<id of " + agent["name"].get<std::string>() + ">";
    agent["host"] = "<host>";
    agent["pid"] = 0;
    agent["remote"] = "<remote>";
    agent["devices"] = "<devices of this machine>";
  }
  for (auto& scenario : report["scenarios"]) {
    scenario["duration_ms"] = 0;
    // Which sides reported before the run ended is timing: keep each side's verdict only.
    json sides = json::object();
    for (const auto& [agent, side] : scenario["sides"].items()) sides[agent] = side["verdict"];
    scenario["sides"] = sides;
  }
  return normalize_text(with_ids_named(report, ids).dump(2) + "\n");
}

void approve(const std::string& name, const std::string& actual) {
  const std::string path = kBaselines + "/" + name;
  if (const char* update = std::getenv("FAULTLINE_UPDATE_BASELINES"); update && *update == '1') {
    std::ofstream(path) << actual;
  }
  std::ifstream file(path);
  REQUIRE(file.good());  // no baseline: run once with FAULTLINE_UPDATE_BASELINES=1
  const std::string expected = read_text_file(path);
  INFO("baseline " << path << " differs; actual:\n" << actual);
  CHECK(actual == expected);
}

}  // namespace

TEST_CASE("report.json, junit.xml and summary.md match their approved baselines",
          "[integration][ofi]") {
  TempDir dir;
  auto result =
      run_command(kFaultline + " run " + kData + "/wrong-expectation.json " + kData +
                  "/verbs-only.json inline.workload-inline-on --seed 1 --report-dir " + dir.path());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 1);
  approve("report.json", normalize_report(read_text_file(dir.path() + "/report.json")));
  approve("junit.xml", normalize_text(read_text_file(dir.path() + "/junit.xml")));
  approve("summary.md", normalize_text(read_text_file(dir.path() + "/summary.md")));
}
