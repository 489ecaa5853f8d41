// A process's metrics against a real Pushgateway (Debian `prometheus-pushgateway`) on
// 127.0.0.1: each process continues the counters its group holds, so they grow from run to
// run as counters must; groups of other instances stay apart; what the gateway holds in
// another shape is not taken; an unreachable gateway is named.
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <catch2/catch.hpp>

#include "faultline/reports/metrics.hpp"
#include "faultline/reports/pushgateway.hpp"
#include "support/background_process.hpp"
#include "support/local_port.hpp"

using namespace faultline::reports;
using faultline::testing::BackgroundProcess;
using faultline::testing::free_port;
using faultline::testing::local_address;
using nlohmann::json;

namespace {

struct Pushgateway {
  int port = free_port();
  BackgroundProcess process{"exec prometheus-pushgateway --web.listen-address=" +
                            local_address(port)};
  Pushgateway() { REQUIRE(process.wait_for_output("Listening on", std::chrono::seconds(20))); }
  std::string url() const { return "http://" + local_address(port); }
};

MetricsPlan links_plan() {
  MetricsPlan plan;
  plan.suite = "links";
  plan.scenarios = {"pingpong"};
  plan.transport = "ofi/tcp";
  plan.device = "lo";
  plan.label_values = {{"verdict", {"pass", "fail"}}, {"op", {"SEND"}}};
  return plan;
}

// One run of a fresh process as `instance`: the failing pingpong counted once.
void one_failing_run(const std::string& url, const std::string& instance) {
  Metrics metrics;
  metrics.push_to(url, instance);
  metrics.start_run(links_plan());
  metrics.count_scenario({{"id", "pingpong"}, {"verdict", "fail"}, {"duration_ms", 300.0}}, "links",
                         "ofi/tcp", "lo");
  metrics.end_run();
  REQUIRE(metrics.finish(false).ok());
}

// The value the gateway holds for `family` in the group of `instance`, where its labels
// include `labels`; -1 when there is none.
double held(const std::string& url, const std::string& instance, const std::string& family,
            const json& labels = json::object()) {
  const PushGroup group{url, "faultline", {{"instance", instance}, {"suite", "links"}}};
  auto families = read_push_group(group, std::chrono::seconds(5));
  REQUIRE(families.ok());
  if (!families->contains(family)) return -1;
  for (const auto& metric : families->at(family).at("metrics")) {
    bool matches = true;
    for (const auto& [name, value] : labels.items())
      matches = matches && metric.at("labels").value(name, "") == value;
    if (!matches) continue;
    if (metric.contains("count")) return std::stod(metric.at("count").get<std::string>());
    return std::stod(metric.at("value").get<std::string>());
  }
  return -1;
}

}  // namespace

TEST_CASE("pushed counters continue from run to run in their own group", "[integration]") {
  Pushgateway gateway;
  one_failing_run(gateway.url(), "node7");
  CHECK(held(gateway.url(), "node7", "faultline_scenarios_total", {{"verdict", "fail"}}) == 1);
  // Pre-created at 0 in the first push: a dashboard's increase() sees the first failure.
  CHECK(held(gateway.url(), "node7", "faultline_scenarios_total", {{"verdict", "pass"}}) == 0);
  one_failing_run(gateway.url(), "node7");
  one_failing_run(gateway.url(), "node7");
  CHECK(held(gateway.url(), "node7", "faultline_scenarios_total", {{"verdict", "fail"}}) == 3);
  CHECK(held(gateway.url(), "node7", "faultline_scenario_duration_seconds") == 3);
  // Another node's pushes are a group of their own: nothing overwritten, nothing added.
  one_failing_run(gateway.url(), "node8");
  CHECK(held(gateway.url(), "node8", "faultline_scenarios_total", {{"verdict", "fail"}}) == 1);
  CHECK(held(gateway.url(), "node7", "faultline_scenarios_total", {{"verdict", "fail"}}) == 3);
  // A finished run leaves no agent up in the gateway.
  {
    Metrics metrics;
    metrics.push_to(gateway.url(), "node7");
    metrics.start_run(links_plan());
    metrics.set_agent_up("node7", true);
    metrics.end_run();
    REQUIRE(metrics.finish(true).ok());
  }
  CHECK(held(gateway.url(), "node7", "faultline_agent_up", {{"agent", "node7"}}) == 0);
  const double succeeded = held(gateway.url(), "node7", "faultline_last_success_timestamp_seconds");
  CHECK(succeeded > 0);
  // A failing run keeps the last success it found.
  one_failing_run(gateway.url(), "node7");
  CHECK(held(gateway.url(), "node7", "faultline_last_success_timestamp_seconds") == succeeded);
  CHECK(held(gateway.url(), "node7", "faultline_scenarios_total", {{"verdict", "fail"}}) == 4);
}

TEST_CASE("what a gateway holds in another shape is not taken", "[integration]") {
  Pushgateway gateway;
  // Another version's series: other labels, other latency buckets.
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter()
      .Name("faultline_scenarios_total")
      .Register(*registry)
      .Add({{"scenario", "pingpong"}, {"verdict", "fail"}})
      .Increment(7);
  prometheus::BuildHistogram()
      .Name("faultline_operation_latency_seconds")
      .Register(*registry)
      .Add({{"op", "SEND"}}, prometheus::Histogram::BucketBoundaries{0.001, 0.01})
      .Observe(0.005);
  REQUIRE(push_group({gateway.url(), "faultline", {{"instance", "node7"}, {"suite", "links"}}},
                     registry)
              .ok());
  Metrics metrics;
  metrics.push_to(gateway.url(), "node7");
  metrics.start_run(links_plan());
  for (const auto& family : metrics.registry().Collect()) {
    if (family.name == "faultline_scenarios_total") {
      for (const auto& metric : family.metric) CHECK(metric.counter.value == 0);
    }
    if (family.name == "faultline_operation_latency_seconds") {
      for (const auto& metric : family.metric) CHECK(metric.histogram.sample_count == 0);
    }
  }
}

TEST_CASE("an unreachable Pushgateway is named, and the run goes on", "[integration]") {
  const std::string url = "http://" + local_address(free_port());
  Metrics metrics;
  metrics.push_to(url, "node7");
  metrics.start_run(links_plan());  // said on stderr; nothing thrown
  metrics.count_scenario({{"id", "pingpong"}, {"verdict", "pass"}}, "links", "ofi/tcp", "lo");
  const auto pushed = metrics.finish(true);
  REQUIRE_FALSE(pushed.ok());
  CHECK_THAT(pushed.error().describe(), Catch::Contains(url));
}
