// On a real rxe device (Soft-RoCE lane): the RNR scenario makes rxe count RNR NAKs, and the
// growth shows in report.json (a side's port_counters) and in the metrics faultline serves
// (node_exporter's name for it), and the dashboard's hardware panels answer over them.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

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

TEST_CASE("RNR retries on rxe grow rcvd_rnr_err, in the report and in the metrics",
          "[integration][verbs]") {
  TempDir dir;
  const int metrics_port = free_port();
  BackgroundProcess run(
      "exec " + kFaultline + " run natural.rnr-retries-recover --transport verbs --report-dir " +
      dir.path() + " --metrics-port " + std::to_string(metrics_port) + " --metrics-linger 60");
  REQUIRE(run.wait_for_output("scenario runs:", std::chrono::seconds(90)));

  const json report = json::parse(read_text_file(dir.path() + "/report.json"));
  const json& scenario = report.at("scenarios").at(0);
  INFO(scenario.dump(2));
  REQUIRE(scenario.at("verdict") == "pass");
  uint64_t most = 0;
  for (const auto& [agent, side] : scenario.at("sides").items()) {
    const json& counters = side.at("details").at("port_counters");
    REQUIRE(counters.is_object());
    CHECK_THAT(counters.at("device").get<std::string>(), Catch::StartsWith("rxe"));
    most = std::max(most, counters.at("grown").value("hw_counters/rcvd_rnr_err", uint64_t{0}));
  }
  CHECK(most > 0);

  auto scraped = run_command(
      "/usr/bin/python3 -c \"import urllib.request; print(urllib.request.urlopen("
      "'http://" +
      local_address(metrics_port) + "/metrics').read().decode())\"");
  REQUIRE(scraped.exit_code == 0);
  std::smatch sample;
  const std::regex rnr(
      R"(faultline_infiniband_rnr_nak_retry_packets_received_total\{[^}]*counter="hw_counters/rcvd_rnr_err"[^}]*scenario="natural\.rnr-retries-recover"[^}]*\} ([0-9.e+]+))");
  INFO(scraped.out);
  REQUIRE(std::regex_search(scraped.out, sample, rnr));
  CHECK(std::stod(sample[1].str()) == static_cast<double>(most));

  // The dashboard's hardware-counter panels over these counters, evaluated by promtool.
  {
    std::ofstream exposition(dir.path() + "/metrics.txt");
    exposition << scraped.out;
  }
  auto panels = run_command("/usr/bin/python3 " + std::string(FAULTLINE_SOURCE_DIR) +
                            "/tests/reports/dashboard_promtool.py " + dir.path() + "/metrics.txt " +
                            std::string(FAULTLINE_SOURCE_DIR) + "/reports/grafana/faultline.json");
  INFO(panels.out << panels.err);
  CHECK(panels.exit_code == 0);
}
