// Coordinator mode as a cluster runs it: agents named, the report's target what the agents
// use (mixed when they differ, per run in each case), exclude entries scoped to a provider
// judged per run against its agents' targets, and --pairs choosing the pairs.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "../harness_test_paths.hpp"
#include "support/background_process.hpp"
#include "support/local_port.hpp"

using faultline::testing::BackgroundProcess;
using faultline::testing::read_text_file;
using faultline::testing::TempDir;
using nlohmann::json;

namespace {

struct Cluster {
  int exit_code = -1;
  json report;
  std::string log;
};

// A coordinator with `arguments` and one agent per entry of `agents` (each its own options).
Cluster run_cluster(const TempDir& dir, const std::string& arguments,
                    const std::vector<std::string>& agents) {
  BackgroundProcess coordinator("FAULTLINE_TOKEN=t exec " + kFaultline +
                                " coordinator --listen 127.0.0.1:0 --agents " +
                                std::to_string(agents.size()) + " --port-file " + dir.path() +
                                "/port --report-dir " + dir.path() + "/report " + arguments);
  const std::string port = faultline::testing::wait_for_port_file(dir.path() + "/port");
  REQUIRE_FALSE(port.empty());
  std::vector<std::unique_ptr<BackgroundProcess>> running;
  for (const auto& options : agents) {
    running.push_back(std::make_unique<BackgroundProcess>("FAULTLINE_TOKEN=t exec " + kFaultline +
                                                          " agent --coordinator 127.0.0.1:" + port +
                                                          " " + options));
  }
  Cluster cluster;
  const auto exit_code = coordinator.wait(std::chrono::seconds(90));
  REQUIRE(exit_code.has_value());
  cluster.exit_code = *exit_code;
  cluster.log = coordinator.out() + coordinator.err();
  for (auto& agent : running) cluster.log += agent->err();
  cluster.report = json::parse(read_text_file(dir.path() + "/report/report.json"));
  return cluster;
}

std::string exclude_file(const TempDir& dir) {
  const std::string path = dir.path() + "/exclude.json";
  std::ofstream(path) << R"({"entries": [{"scenario": "test.wrong-*", "provider": "tcp",
                            "reason": "known on tcp"}]})";
  return path;
}

}  // namespace

TEST_CASE("coordinator: a provider-scoped exclude applies to a pair on that provider, as under run",
          "[integration][ofi]") {
  TempDir dir;
  const auto cluster =
      run_cluster(dir, kData + "/wrong-expectation.json --exclude " + exclude_file(dir),
                  {"--provider tcp --name rack1-a", "--provider tcp --name rack1-a"});
  INFO(cluster.log);
  CHECK(cluster.exit_code == 0);
  const json& run = cluster.report.at("run");
  CHECK(run.at("transport") == "ofi");
  CHECK(run.at("provider") == "tcp");  // what the agents use, not a default
  CHECK(run.at("device") == "lo");     // toward a coordinator on 127.0.0.1
  std::multiset<std::string> names;
  for (const auto& agent : run.at("agents")) names.insert(agent.at("name").get<std::string>());
  CHECK(names == std::multiset<std::string>{"rack1-a", "rack1-a-2"});  // made unique
  const json& scenario = cluster.report.at("scenarios").at(0);
  CHECK(scenario.at("verdict") == "xfail");
  CHECK_THAT(scenario.at("evidence").get<std::string>(), Catch::Contains("known on tcp"));
  CHECK(scenario.at("agents").at("targets") == json::array({"ofi/tcp lo", "ofi/tcp lo"}));
}

TEST_CASE("coordinator: agents on different targets make a mixed run, judged per pair",
          "[integration][ofi]") {
  TempDir dir;
  const auto cluster =
      run_cluster(dir, kData + "/wrong-expectation.json --exclude " + exclude_file(dir),
                  {"--provider tcp", "--provider sockets"});
  INFO(cluster.log);
  const json& run = cluster.report.at("run");
  CHECK(run.at("transport") == "ofi");
  CHECK(run.at("provider") == "mixed");
  const json& scenario = cluster.report.at("scenarios").at(0);
  std::multiset<std::string> targets;
  for (const auto& target : scenario.at("agents").at("targets"))
    targets.insert(target.get<std::string>());
  CHECK(targets == std::multiset<std::string>{"ofi/tcp lo", "ofi/sockets lo"});
  // The entry names tcp; the sockets side is not on it, so the failure is not excused.
  CHECK(scenario.at("verdict") != "xfail");
  CHECK(scenario.at("verdict") != "pass");
  CHECK(cluster.exit_code != 0);
}

TEST_CASE("coordinator --pairs ring runs each agent with the next only",
          "[integration][ofi][slow]") {
  TempDir dir;
  const auto cluster =
      run_cluster(dir, "pingpong --pairs ring",
                  {"--name n0", "--name n1", "--name n2", "--name n3", "--name n4"});
  INFO(cluster.log);
  CHECK(cluster.exit_code == 0);
  const json& scenarios = cluster.report.at("scenarios");
  CHECK(scenarios.size() == 5);  // not the 10 of all pairs
  CHECK(cluster.report.at("summary").at("total") == 5);
  for (const auto& scenario : scenarios) CHECK(scenario.at("verdict") == "pass");
}
