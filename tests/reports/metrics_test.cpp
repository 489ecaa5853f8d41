// The metric set: names with units and _total, what a scenario adds; and the Grafana
// dashboard, whose every expression must name only metrics faultline exports.
#include "faultline/reports/metrics.hpp"

#include <prometheus/registry.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace faultline::reports;
using nlohmann::json;

namespace {

// Every family the registry exports, by name, after one scenario of each kind was counted.
std::set<std::string> exported_names() {
  Metrics metrics;
  metrics.count_scenario(
      {{"id", "x"},
       {"verdict", "fail"},
       {"duration_ms", 1200.0},
       {"sides", {{"agent-1", {{"details", {{"faults", {{"applied", {{{"kind", "drop"}}}}}}}}}}}}},
      "faults", "ofi/tcp", "lo");
  metrics.set_agent_up("agent-1", true);
  std::set<std::string> names;
  for (const auto& family : metrics.registry().Collect()) names.insert(family.name);
  return names;
}

}  // namespace

TEST_CASE("counters end in _total and durations are in seconds", "[unit]") {
  for (const auto& name : exported_names()) {
    CAPTURE(name);
    CHECK_THAT(name, Catch::StartsWith("faultline_"));
    CHECK(std::regex_match(name, std::regex("faultline_[a-z_]+")));
  }
  const auto names = exported_names();
  CHECK(names.count("faultline_scenarios_total") == 1);
  CHECK(names.count("faultline_scenario_duration_seconds") == 1);
  CHECK(names.count("faultline_faults_injected_total") == 1);
  CHECK(names.count("faultline_agent_up") == 1);
}

TEST_CASE("a counted scenario shows in its counter, histogram and fault kinds", "[unit]") {
  Metrics metrics;
  const json scenario = {
      {"id", "completion.rewrite"},
      {"verdict", "pass"},
      {"duration_ms", 700.0},
      {"sides",
       {{"agent-1", {{"details", {{"faults", {{"applied", {{{"kind", "rewrite_status"}}}}}}}}}},
        {"agent-2", {{"verdict", "error"}}}}}};  // a side without details is fine
  metrics.count_scenario(scenario, "faults", "ofi/tcp", "lo");
  metrics.count_scenario(scenario, "faults", "ofi/tcp", "lo");
  for (const auto& family : metrics.registry().Collect()) {
    if (family.name == "faultline_scenarios_total") {
      REQUIRE(family.metric.size() == 1);
      CHECK(family.metric[0].counter.value == 2);
    }
    if (family.name == "faultline_faults_injected_total") {
      REQUIRE(family.metric.size() == 1);
      CHECK(family.metric[0].label[0].value == "rewrite_status");
      CHECK(family.metric[0].counter.value == 2);
    }
    if (family.name == "faultline_scenario_duration_seconds") {
      REQUIRE(family.metric.size() == 1);
      CHECK(family.metric[0].histogram.sample_count == 2);
      CHECK(family.metric[0].histogram.sample_sum == Approx(1.4));
    }
  }
}

TEST_CASE("every Grafana panel expression names only metrics faultline exports", "[unit]") {
  std::ifstream file(FAULTLINE_GRAFANA_DASHBOARD);
  REQUIRE(file.good());
  const json dashboard = json::parse(file);
  const auto names = exported_names();
  const std::regex metric("faultline_[a-z_]+");
  size_t expressions = 0;
  std::vector<json> queries;
  for (const auto& panel : dashboard.at("panels"))
    for (const auto& target : panel.at("targets")) queries.push_back(target.at("expr"));
  for (const auto& variable : dashboard.at("templating").at("list"))
    if (variable.value("type", "") == "query") queries.push_back(variable.at("query"));
  for (const auto& query : queries) {
    const std::string expr = query.get<std::string>();
    ++expressions;
    for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end; it != end; ++it) {
      std::string name = it->str();
      // A histogram is queried through its series.
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        const std::string s(suffix);
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
            names.count(name.substr(0, name.size() - s.size())) == 1) {
          name = name.substr(0, name.size() - s.size());
        }
      }
      CAPTURE(expr, name);
      CHECK(names.count(name) == 1);
    }
  }
  CHECK(expressions >= 6);
}
