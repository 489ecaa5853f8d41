// Metrics as a dashboard sees them: a real Prometheus server (Debian `prometheus`) on
// 127.0.0.1 scrapes a running agent and the coordinator; the counts by verdict are asserted
// through Prometheus's HTTP query API. Pushed runs: tests/reports/dashboard_test.py.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "../harness_test_paths.hpp"
#include "support/background_process.hpp"
#include "support/local_port.hpp"
#include "support/run_command.hpp"

using faultline::testing::BackgroundProcess;
using faultline::testing::free_port;
using faultline::testing::local_address;
using faultline::testing::read_text_file;
using faultline::testing::run_command;
using faultline::testing::TempDir;
using nlohmann::json;

namespace {

const std::string kQuery = FAULTLINE_PROMETHEUS_QUERY;

std::string local(int port) { return local_address(port); }

// `sum by (verdict)` of a selector, as Prometheus answers it: {verdict: count}, the verdicts
// no run ended with (their series made at 0) left out.
std::map<std::string, double> by_verdict(const std::string& prometheus,
                                         const std::string& selector) {
  auto answer = run_command("/usr/bin/python3 " + kQuery + " http://" + prometheus +
                            " 'sum by (verdict) (" + selector + ") > 0'");
  std::map<std::string, double> counts;
  if (answer.exit_code != 0) return counts;
  for (const auto& sample : json::parse(answer.out))
    counts[sample.at("metric").value("verdict", "")] = sample.at("value");
  return counts;
}

// Polls until `expected` is what Prometheus says, or 40 s pass; the last answer.
std::map<std::string, double> wait_for(const std::string& prometheus, const std::string& selector,
                                       const std::map<std::string, double>& expected) {
  std::map<std::string, double> seen;
  for (int i = 0; i < 80 && seen != expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    seen = by_verdict(prometheus, selector);
  }
  return seen;
}

// The value of a query that answers one sample, polled until it is above `at_least` or 40 s
// pass; -1 while there is none.
double wait_for_value(const std::string& prometheus, const std::string& query, double at_least) {
  double value = -1;
  for (int i = 0; i < 80 && value < at_least; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    auto answer =
        run_command("/usr/bin/python3 " + kQuery + " http://" + prometheus + " '" + query + "'");
    if (answer.exit_code != 0) continue;
    const json samples = json::parse(answer.out);
    if (samples.size() == 1) value = samples.at(0).at("value");
  }
  return value;
}

// What `port`'s /metrics serves (kept in DIR/exposition.txt), checked by promtool's lint.
struct Lint {
  std::string exposition;
  faultline::testing::CommandResult promtool;
};

Lint lint_endpoint(const std::string& dir, int port) {
  const std::string file = dir + "/exposition.txt";
  const auto scraped = run_command(
      "/usr/bin/python3 -c 'import sys, urllib.request; "
      "sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' http://" +
      local(port) + "/metrics > " + file);
  REQUIRE(scraped.exit_code == 0);
  return {read_text_file(file), run_command("promtool check metrics < " + file + " 2>&1")};
}

struct Prometheus {
  TempDir dir;
  int port = free_port();
  std::unique_ptr<BackgroundProcess> server;

  explicit Prometheus(const std::vector<std::string>& targets) {
    std::ofstream config(dir.path() + "/prometheus.yml");
    config << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
           << "scrape_configs:\n  - job_name: faultline\n    static_configs:\n"
           << "      - targets: [";
    for (size_t i = 0; i < targets.size(); ++i)
      config << (i ? ", " : "") << "'" << targets[i] << "'";
    config << "]\n";
    config.close();
    server =
        std::make_unique<BackgroundProcess>("exec prometheus --config.file=" + dir.path() +
                                            "/prometheus.yml --storage.tsdb.path=" + dir.path() +
                                            "/data --web.listen-address=" + local(port));
    REQUIRE(server->wait_for_output("Server is ready to receive web requests",
                                    std::chrono::seconds(30)));
  }
  std::string address() const { return local(port); }
};

}  // namespace

TEST_CASE("Prometheus scrapes an agent and the coordinator: scenarios by verdict",
          "[integration][ofi]") {
  TempDir dir;
  const int coordinator_metrics = free_port();
  const int agent_metrics = free_port();
  Prometheus prometheus({local(agent_metrics), local(coordinator_metrics)});
  // One pass, one fail, one skip, between a coordinator and two agents.
  BackgroundProcess coordinator(
      "FAULTLINE_TOKEN=t exec " + kFaultline + " coordinator --listen 127.0.0.1:0 --agents 2 " +
      "--port-file " + dir.path() + "/port --report-dir " + dir.path() + " --metrics-port " +
      std::to_string(coordinator_metrics) + " --metrics-linger 60 " + kData +
      "/wrong-expectation.json " + kData + "/verbs-only.json inline.workload-inline-on");
  const std::string port = faultline::testing::wait_for_port_file(dir.path() + "/port");
  REQUIRE_FALSE(port.empty());
  const std::string agent_command = "FAULTLINE_TOKEN=t exec " + kFaultline +
                                    " agent --coordinator 127.0.0.1:" + port +
                                    " --transport ofi --provider tcp --metrics-linger 60";
  BackgroundProcess agent(agent_command + " --metrics-port " + std::to_string(agent_metrics));
  BackgroundProcess other_agent(agent_command);
  REQUIRE(coordinator.wait_for_output("3 scenario runs:", std::chrono::seconds(60)));

  const std::map<std::string, double> expected = {{"fail", 1}, {"pass", 1}, {"skip", 1}};
  CHECK(wait_for(prometheus.address(),
                 "faultline_scenarios_total{instance=\"" + local(agent_metrics) + "\"}",
                 expected) == expected);
  CHECK(wait_for(prometheus.address(),
                 "faultline_scenarios_total{instance=\"" + local(coordinator_metrics) + "\"}",
                 expected) == expected);
  // Traffic: the coordinator counts every side's, the agent its own side's.
  const std::string agent_selector = "{instance=\"" + local(agent_metrics) + "\"}";
  const std::string coordinator_selector = "{instance=\"" + local(coordinator_metrics) + "\"}";
  const double agent_completions = wait_for_value(
      prometheus.address(), "sum(faultline_completions_total" + agent_selector + ")", 1);
  const double all_completions = wait_for_value(
      prometheus.address(), "sum(faultline_completions_total" + coordinator_selector + ")", 1);
  CHECK(agent_completions >= 1);
  CHECK(all_completions > agent_completions);
  CHECK(wait_for_value(prometheus.address(),
                       "sum(faultline_operation_latency_seconds_count" + coordinator_selector + ")",
                       1) >= 1);
  CHECK(wait_for_value(
            prometheus.address(),
            "sum(faultline_bytes_total{direction=\"sent\"," + coordinator_selector.substr(1) + ")",
            1) >= 1);
  // The run is over: the coordinator's agents are no longer up, none was lost; the agent
  // exports its own gauge by its name (0 once the coordinator let it go).
  auto up =
      run_command("/usr/bin/python3 " + kQuery + " http://" + prometheus.address() +
                  " 'sum(faultline_agent_up{instance=\"" + local(coordinator_metrics) + "\"})'");
  REQUIRE(up.exit_code == 0);
  CHECK(json::parse(up.out).at(0).at("value") == 0.0);
  auto lost = run_command("/usr/bin/python3 " + kQuery + " http://" + prometheus.address() +
                          " 'faultline_agents_lost_total{instance=\"" + local(coordinator_metrics) +
                          "\"}'");
  REQUIRE(lost.exit_code == 0);
  CHECK(json::parse(lost.out).at(0).at("value") == 0.0);
  auto own = run_command("/usr/bin/python3 " + kQuery + " http://" + prometheus.address() +
                         " 'faultline_agent_up{instance=\"" + local(agent_metrics) + "\"}'");
  REQUIRE(own.exit_code == 0);
  REQUIRE(json::parse(own.out).size() == 1);
  CHECK_FALSE(json::parse(own.out).at(0).at("metric").at("agent").get<std::string>().empty());
  // Every label set exists from the start: the statuses no completion had are there at 0.
  CHECK(wait_for_value(prometheus.address(),
                       "count(faultline_completions_total" + coordinator_selector + " == 0)",
                       1) >= 10);
  // What both endpoints expose passes promtool's lint (names, units, _total, labels).
  for (const int metrics_port : {agent_metrics, coordinator_metrics}) {
    const Lint lint = lint_endpoint(dir.path(), metrics_port);
    CHECK_THAT(lint.exposition, Catch::Contains("faultline_scenarios_total"));
    INFO(lint.promtool.out);
    CHECK(lint.promtool.exit_code == 0);
  }
}

TEST_CASE("faultline run's metrics endpoint passes promtool's lint", "[integration][ofi]") {
  TempDir dir;
  const int metrics_port = free_port();
  BackgroundProcess run("exec " + kFaultline + " run inline.workload-inline-on --report-dir " +
                        dir.path() + " --metrics-port " + std::to_string(metrics_port) +
                        " --metrics-linger 30");
  REQUIRE(run.wait_for_output("scenario runs:", std::chrono::seconds(60)));
  const Lint lint = lint_endpoint(dir.path(), metrics_port);
  CHECK_THAT(lint.exposition, Catch::Contains("faultline_scenarios_total"));
  INFO(lint.promtool.out);
  CHECK(lint.promtool.exit_code == 0);
}

TEST_CASE("an unreachable Pushgateway is named, and a passing run becomes a harness error",
          "[integration][ofi]") {
  TempDir dir;
  auto run = run_command(kFaultline + " run inline.workload-inline-on --pushgateway http://" +
                         local(free_port()) + " --report-dir " + dir.path());
  CHECK(run.exit_code == 3);
  CHECK_THAT(run.err, Catch::Contains("http://127.0.0.1:"));
}
