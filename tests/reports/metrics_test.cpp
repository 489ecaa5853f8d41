// The metric set: names with units and _total, what a scenario adds; and the Grafana
// dashboard, whose every expression must name only metrics faultline exports.
#include "faultline/reports/metrics.hpp"
#include "faultline/reports/monitor_metrics.hpp"

#include "faultline/core/latency_buckets.hpp"

#include <prometheus/registry.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace faultline::reports;
using nlohmann::json;

namespace {

// A side's details as a scenario process reports them: one fault, traffic of every kind, and
// port counters that grew (rxe, mlx5 and IB counter files, as sysfs names them).
json side_details(const std::string& host) {
  json buckets = json::array();
  for (size_t i = 0; i <= faultline::latency_bounds_seconds().size(); ++i)
    buckets.push_back(i == 3 ? 2 : 0);
  return {{"faults", {{"applied", {{{"kind", "drop"}}}}}},
          {"traffic",
           {{"completions", {{"SUCCESS", 5}, {"REM_ACCESS_ERR", 1}}},
            {"bytes", {{"sent", 4096}, {"received", 1024}}},
            {"latency",
             {{"SEND",
               {{"count", 2},
                {"sum_seconds", 0.00006},
                {"max_seconds", 0.00004},
                {"buckets", buckets}}}}}}},
          {"port_counters",
           {{"host", host},
            {"device", "rxe0"},
            {"port", 1},
            {"grown",
             {{"hw_counters/rcvd_rnr_err", 2},
              {"hw_counters/rnr_nak_retry_err", 1},
              {"hw_counters/rcvd_seq_err", 1},
              {"hw_counters/local_ack_timeout_err", 1},
              {"hw_counters/retry_rnr_exceeded_err", 1},
              {"hw_counters/sent_pkts", 9},
              {"hw_counters/rcvd_pkts", 9},
              {"counters/port_xmit_data", 10}}}}}};
}

// Every family the registry exports, by name, after one scenario of each kind was counted.
std::set<std::string> exported_names() {
  Metrics metrics;
  metrics.count_scenario({{"id", "x"},
                          {"verdict", "fail"},
                          {"duration_ms", 1200.0},
                          {"sides", {{"agent-1", {{"details", side_details("h")}}}}}},
                         "faults", "ofi/tcp", "lo");
  metrics.set_agent_up("agent-1", true);
  REQUIRE(metrics.finish(true).ok());  // the last success
  // The monitor's, in the same registry, after a round with a suspect of each kind.
  MonitorMetrics monitor(metrics.registry(), true);
  monitor.count_round(
      {{"round", 1},
       {"agents",
        {{{"name", "a"},
          {"pairs", 1},
          {"failed", 1},
          {"slow", 0},
          {"suspect", true},
          {"rtt_p50_seconds", 1e-5},
          {"rtt_p99_seconds", 2e-5}}}},
       {"pairs", {{{"a", "a"}, {"b", "b"}, {"state", "failed"}, {"rtt_p50_seconds", 1e-5}}}},
       {"suspects",
        {{{"kind", "agent"}, {"name", "a"}, {"reason", "failed"}},
         {{"kind", "rail"}, {"name", "r"}, {"reason", "failed"}}}}});
  std::set<std::string> names;
  for (const auto& family : metrics.registry().Collect()) names.insert(family.name);
  return names;
}

// The one sample of `family` with `label`="value", or nullptr.
const prometheus::ClientMetric* sample(const std::vector<prometheus::MetricFamily>& families,
                                       const std::string& family, const std::string& label,
                                       const std::string& value) {
  for (const auto& f : families) {
    if (f.name != family) continue;
    for (const auto& metric : f.metric)
      for (const auto& pair : metric.label)
        if (pair.name == label && pair.value == value) return &metric;
  }
  return nullptr;
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
  CHECK(names.count("faultline_completions_total") == 1);
  CHECK(names.count("faultline_bytes_total") == 1);
  CHECK(names.count("faultline_operation_latency_seconds") == 1);
  CHECK(names.count("faultline_infiniband_rnr_nak_retry_packets_received_total") == 1);
  CHECK(names.count("faultline_infiniband_port_data_transmitted_bytes_total") == 1);
  CHECK(names.count("faultline_agents_lost_total") == 1);
  CHECK(names.count("faultline_last_success_timestamp_seconds") == 1);
  CHECK(names.count("faultline_build_info") == 1);
}

// Every sample of `family`, as its labels and value (a histogram's count).
std::vector<std::pair<std::map<std::string, std::string>, double>> samples(
    const std::vector<prometheus::MetricFamily>& families, const std::string& family) {
  std::vector<std::pair<std::map<std::string, std::string>, double>> found;
  for (const auto& f : families) {
    if (f.name != family) continue;
    for (const auto& metric : f.metric) {
      std::map<std::string, std::string> labels;
      for (const auto& pair : metric.label) labels[pair.name] = pair.value;
      const double value = f.type == prometheus::MetricType::Histogram
                               ? static_cast<double>(metric.histogram.sample_count)
                           : f.type == prometheus::MetricType::Gauge ? metric.gauge.value
                                                                     : metric.counter.value;
      found.emplace_back(labels, value);
    }
  }
  return found;
}

TEST_CASE("a run's label sets exist at 0 before its first scenario ends", "[unit]") {
  Metrics metrics;
  MetricsPlan plan;
  plan.suite = "faults";
  plan.scenarios = {"a", "b"};
  plan.transport = "ofi/tcp";
  plan.device = "";
  plan.label_values = {{"verdict", {"pass", "fail", "error"}},
                       {"status", {"SUCCESS", "REM_ACCESS_ERR"}},
                       {"kind", {"rewrite_status"}},
                       {"op", {"SEND", "RECV"}}};
  metrics.start_run(plan);
  const auto families = metrics.registry().Collect();
  const auto scenarios = samples(families, "faultline_scenarios_total");
  CHECK(scenarios.size() == 6);  // 2 scenarios x 3 verdicts
  for (const auto& [labels, value] : scenarios) {
    CHECK(value == 0);
    CHECK(labels.at("device") == "default");  // never an empty label
    CHECK(labels.at("suite") == "faults");
  }
  CHECK(samples(families, "faultline_completions_total").size() == 2);
  CHECK(samples(families, "faultline_faults_injected_total").size() == 1);
  CHECK(samples(families, "faultline_bytes_total").size() == 2);
  CHECK(samples(families, "faultline_operation_latency_seconds").size() == 2);
  const auto durations = samples(families, "faultline_scenario_duration_seconds");
  REQUIRE(durations.size() == 1);  // by suite only: no series per scenario
  CHECK(durations[0].first == std::map<std::string, std::string>{{"suite", "faults"}});
  REQUIRE(samples(families, "faultline_agents_lost_total").size() == 1);
}

TEST_CASE("no exported label is empty", "[unit]") {
  Metrics metrics;
  metrics.count_scenario({{"id", "x"}, {"verdict", "pass"}}, "smoke", "", "");
  metrics.set_agent_up("", true);
  for (const auto& family : metrics.registry().Collect())
    for (const auto& metric : family.metric)
      for (const auto& pair : metric.label) {
        CAPTURE(family.name, pair.name);
        CHECK_FALSE(pair.value.empty());
      }
}

TEST_CASE("agents are up during a run and cleared at its end, a lost one counted", "[unit]") {
  Metrics metrics;
  metrics.set_agent_up("node1", true);
  metrics.set_agent_up("node2", true);
  metrics.set_agent_up("node2", false);
  metrics.count_agent_lost();
  auto up = samples(metrics.registry().Collect(), "faultline_agent_up");
  REQUIRE(up.size() == 2);
  CHECK(up[0].second + up[1].second == 1);
  metrics.end_run();
  for (const auto& [labels, value] : samples(metrics.registry().Collect(), "faultline_agent_up"))
    CHECK(value == 0);
  CHECK(samples(metrics.registry().Collect(), "faultline_agents_lost_total").at(0).second == 1);
}

TEST_CASE("the build is exported, and the last success only by a run that passed", "[unit]") {
  Metrics metrics({"1.2.3", "ofi,verbs"});
  const auto build = samples(metrics.registry().Collect(), "faultline_build_info");
  REQUIRE(build.size() == 1);
  CHECK(build[0].first.at("version") == "1.2.3");
  CHECK(build[0].first.at("transports") == "ofi,verbs");
  CHECK(build[0].second == 1);
  MetricsPlan plan;
  plan.suite = "links";
  metrics.start_run(plan);
  REQUIRE(metrics.finish(false).ok());
  CHECK(samples(metrics.registry().Collect(), "faultline_last_success_timestamp_seconds").empty());
  const double before = static_cast<double>(std::time(nullptr));
  REQUIRE(metrics.finish(true).ok());
  const auto success =
      samples(metrics.registry().Collect(), "faultline_last_success_timestamp_seconds");
  REQUIRE(success.size() == 1);
  CHECK(success[0].first.at("suite") == "links");
  CHECK(success[0].second >= before);
}

TEST_CASE("latency buckets start at 500 ns, so 1-3 us land in buckets of their own", "[unit]") {
  const auto& bounds = faultline::latency_bounds_seconds();
  CHECK(bounds.front() == Approx(5e-7));
  const auto below = [&](double seconds) {
    return std::lower_bound(bounds.begin(), bounds.end(), seconds) - bounds.begin();
  };
  CHECK(below(1.2e-6) != below(2.5e-6));
  CHECK(below(0.7e-6) != below(1.2e-6));
}

TEST_CASE("sides' traffic adds up by status, direction and opcode", "[unit]") {
  Metrics metrics;
  metrics.count_scenario({{"id", "x"},
                          {"verdict", "pass"},
                          {"sides",
                           {{"agent-1", {{"details", side_details("h1")}}},
                            {"agent-2", {{"details", side_details("h2")}}}}}},
                         "faults", "ofi/tcp", "lo");
  const auto families = metrics.registry().Collect();
  const auto* errors = sample(families, "faultline_completions_total", "status", "REM_ACCESS_ERR");
  REQUIRE(errors != nullptr);
  CHECK(errors->counter.value == 2);
  const auto* sent = sample(families, "faultline_bytes_total", "direction", "sent");
  REQUIRE(sent != nullptr);
  CHECK(sent->counter.value == 8192);
  const auto* send = sample(families, "faultline_operation_latency_seconds", "op", "SEND");
  REQUIRE(send != nullptr);
  CHECK(send->histogram.sample_count == 4);
  CHECK(send->histogram.sample_sum == Approx(0.00012));
  CHECK(send->histogram.bucket.at(3).cumulative_count == 4);
}

TEST_CASE("port counter growth counts once per port, however many sides share it", "[unit]") {
  Metrics metrics;
  // Both sides on one host's rxe0 (the Soft-RoCE lane) see the same growth.
  metrics.count_scenario({{"id", "natural.rnr"},
                          {"verdict", "pass"},
                          {"sides",
                           {{"agent-1", {{"details", side_details("h")}}},
                            {"agent-2", {{"details", side_details("h")}}}}}},
                         "faults", "verbs", "rxe0");
  const auto families = metrics.registry().Collect();
  const auto* rnr = sample(families, "faultline_infiniband_rnr_nak_retry_packets_received_total",
                           "counter", "hw_counters/rcvd_rnr_err");
  REQUIRE(rnr != nullptr);
  CHECK(rnr->counter.value == 2);
  for (const auto& label : rnr->label) {
    if (label.name == "scenario") CHECK(label.value == "natural.rnr");
    if (label.name == "device") CHECK(label.value == "rxe0");
    if (label.name == "port") CHECK(label.value == "1");
  }
  // IB data counters count 4-octet words.
  const auto* data = sample(families, "faultline_infiniband_port_data_transmitted_bytes_total",
                            "counter", "counters/port_xmit_data");
  REQUIRE(data != nullptr);
  CHECK(data->counter.value == 40);
}

TEST_CASE("details a peer got wrong are left out, never thrown on", "[unit]") {
  Metrics metrics;
  json bad = side_details("h");
  bad["traffic"]["latency"]["SEND"]["buckets"] = {1, 2};  // not the metric's buckets
  bad["traffic"]["completions"]["SUCCESS"] = "many";
  bad["traffic"]["bytes"] = 12;
  bad["port_counters"]["grown"]["elsewhere/x"] = 3;  // not a counter file
  bad["port_counters"]["grown"]["hw_counters/negative"] = -3;
  const json sides = {{"agent-1", {{"details", bad}}},
                      {"agent-2", {{"details", "text"}}},
                      {"agent-3", 7},
                      {"agent-4", {{"details", {{"traffic", {{"latency", {{"SEND", 1}}}}}}}}}};
  REQUIRE_NOTHROW(
      metrics.count_scenario({{"id", "x"}, {"verdict", "pass"}, {"sides", sides}}, "s", "t", "d"));
  REQUIRE_NOTHROW(metrics.count_scenario({{"id", "x"}, {"sides", 3}}, "s", "t", "d"));
  const auto families = metrics.registry().Collect();
  CHECK(sample(families, "faultline_operation_latency_seconds", "op", "SEND") == nullptr);
  const auto* success = sample(families, "faultline_completions_total", "status", "SUCCESS");
  REQUIRE(success != nullptr);
  CHECK(success->counter.value == 0);
  for (const auto& family : families) CHECK(family.name != "faultline_infiniband_x_total");
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
    if (variable.value("type", "") == "query") queries.push_back(variable.at("definition"));
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

TEST_CASE("a SUT scenario counts how its judged program reacted", "[unit]") {
  Metrics metrics;
  const json scenario = {{"id", "sut.x"},
                         {"verdict", "pass"},
                         {"duration_ms", 500.0},
                         {"sides", json::object()},
                         {"sut", {{"expect", "detected"}, {"verdict", "detected"}}}};
  metrics.count_scenario(scenario, "sut", "sut", "");
  metrics.count_scenario({{"id", "plain"}, {"verdict", "pass"}}, "sut", "sut", "");
  const auto families = metrics.registry().Collect();
  const auto* detected = sample(families, "faultline_sut_verdicts_total", "verdict", "detected");
  REQUIRE(detected != nullptr);
  CHECK(detected->counter.value == 1);
  for (const auto& family : families)
    if (family.name == "faultline_sut_verdicts_total") CHECK(family.metric.size() == 1);
}

TEST_CASE("the monitor's series follow the rounds: a cleared suspect and a gone agent vanish",
          "[unit]") {
  prometheus::Registry registry;
  MonitorMetrics monitor(registry, true);
  const auto agent = [](const std::string& name, bool suspect) {
    return json{{"name", name},
                {"pairs", 2},
                {"failed", suspect ? 2 : 0},
                {"slow", 0},
                {"suspect", suspect},
                {"rtt_p50_seconds", 4e-5},
                {"rtt_p99_seconds", 9e-5}};
  };
  monitor.count_round({{"round", 1},
                       {"interval_seconds", 60},
                       {"agents", {agent("a", true), agent("b", false), agent("c", false)}},
                       {"pairs", {{{"a", "a"}, {"b", "b"}, {"state", "failed"}}}},
                       {"suspects", {{{"kind", "agent"}, {"name", "a"}, {"reason", "failed"}}}}});
  auto families = registry.Collect();
  CHECK(samples(families, "faultline_suspect").size() == 1);
  CHECK(samples(families, "faultline_monitor_agent_healthy").size() == 3);
  CHECK(samples(families, "faultline_monitor_pair_ok").size() == 1);
  CHECK(samples(families, "faultline_monitor_interval_seconds").at(0).second == 60);
  // The fault gone, and c gone with it.
  monitor.count_round({{"round", 2},
                       {"agents", {agent("a", false), agent("b", false)}},
                       {"pairs", json::array()},
                       {"suspects", json::array()}});
  families = registry.Collect();
  CHECK(samples(families, "faultline_suspect").empty());
  CHECK(samples(families, "faultline_monitor_agent_healthy").size() == 2);
  CHECK(samples(families, "faultline_monitor_pair_ok").empty());
  CHECK(samples(families, "faultline_monitor_rounds_total").at(0).second == 2);
  // Pair series only up to 64 agents, whatever the flag.
  json many = json::array();
  for (int i = 0; i < 65; ++i) many.push_back(agent("n" + std::to_string(i), false));
  monitor.count_round({{"round", 3},
                       {"agents", many},
                       {"pairs", {{{"a", "n0"}, {"b", "n1"}, {"state", "ok"}}}},
                       {"suspects", json::array()}});
  CHECK(samples(registry.Collect(), "faultline_monitor_pair_ok").empty());
}
