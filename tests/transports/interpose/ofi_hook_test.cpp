// The libfabric hook interposer in unmodified programs: fabtests' fi_pingpong over tcp, loaded
// with FI_PROVIDER_PATH and FI_HOOK=faultline, faults from FAULTLINE_FAULTS, events read back
// from FAULTLINE_FAULT_LOG.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "faultline/harness/base/port_listening.hpp"
#include "support/background_process.hpp"
#include "support/local_port.hpp"

using faultline::testing::BackgroundProcess;
using faultline::testing::TempDir;
using nlohmann::json;

namespace {

struct PingPongRun {
  int server_exit = -1;
  int client_exit = -1;
  std::string server_output;
  std::string client_output;
  std::vector<json> events;  ///< every line of the fault log, from both processes

  std::vector<json> of(const std::string& event) const {
    std::vector<json> found;
    for (const auto& line : events)
      if (line.value("event", "") == event) found.push_back(line);
    return found;
  }
};

// fi_pingpong server and client (`endpoint`: msg or rdm) under the hook, with `faults`.
PingPongRun run_pingpong(const std::string& endpoint, const std::string& faults) {
  TempDir dir;
  const std::string log = dir.path() + "/faults.jsonl";
  const std::string env =
      "FI_PROVIDER_PATH=" FAULTLINE_INTERPOSE_DIR " FI_HOOK=faultline FAULTLINE_FAULT_LOG=" + log +
      " FAULTLINE_FAULTS='" + faults + "' ";
  const std::string port = std::to_string(faultline::testing::free_port());
  const std::string common = "fi_pingpong -p tcp -e " + endpoint + " -I 20 -S 64 ";
  BackgroundProcess server("exec env " + env + common + "-B " + port);
  // The client starts once the server listens (a busy host may take seconds to start it).
  REQUIRE(faultline::harness::wait_until_listening(
      server.pid(), port, std::chrono::steady_clock::now() + std::chrono::seconds(30)));
  BackgroundProcess client("exec env " + env + common + "-P " + port + " 127.0.0.1");
  PingPongRun run;
  run.client_exit = client.wait(std::chrono::seconds(30)).value_or(-1);
  run.server_exit = server.wait(std::chrono::seconds(30)).value_or(-1);
  run.server_output = server.out() + server.err();
  run.client_output = client.out() + client.err();
  std::istringstream lines(faultline::testing::read_text_file(log));
  for (std::string line; std::getline(lines, line);) run.events.push_back(json::parse(line));
  return run;
}

}  // namespace

TEST_CASE("the hook instruments fi_pingpong and changes nothing without a fault",
          "[integration][ofi]") {
  const PingPongRun run = run_pingpong("rdm", R"({"faults": []})");
  INFO(run.server_output << run.client_output);
  CHECK(run.server_exit == 0);
  CHECK(run.client_exit == 0);
  // Both processes, both layers: rxm's CQs and those of its core tcp provider.
  std::set<std::string> layers;
  for (const auto& event : run.of("instrumented"))
    if (event.at("object") == "cq") layers.insert(event.at("layer").get<std::string>());
  CHECK(layers == std::set<std::string>{"ofi_rxm", "tcp"});
  CHECK(run.of("fault").empty());
}

TEST_CASE("a completion error in fi_pingpong is detected, rdm and msg", "[integration][ofi]") {
  for (const std::string endpoint : {"rdm", "msg"}) {
    // The 5th completion each process reads becomes REM_ACCESS_ERR.
    const PingPongRun run =
        run_pingpong(endpoint, R"({"faults": [{"status": "REM_ACCESS_ERR", "nth": 5}]})");
    INFO(endpoint << ": " << run.server_output << run.client_output);
    // Each side fails: one on the injected error, named; the other on it or on its peer's
    // going away (msg: the connection closes).
    CHECK(run.client_exit != 0);
    CHECK(run.server_exit != 0);
    CHECK_THAT(run.server_output + run.client_output, Catch::Contains("injected by faultline"));
    const auto faults = run.of("fault");
    REQUIRE_FALSE(faults.empty());
    for (const auto& fault : faults) {
      CHECK(fault.at("match") == 5);
      CHECK(fault.at("status") == "REM_ACCESS_ERR");
    }
  }
}

TEST_CASE("a fault aimed at the core tcp layer hits that layer's nth completion, not rxm's",
          "[integration][ofi]") {
  const PingPongRun run =
      run_pingpong("rdm", R"({"faults": [{"status": "GENERAL_ERR", "nth": 7, "layer": "tcp"}]})");
  INFO(run.server_output << run.client_output);
  const auto faults = run.of("fault");
  REQUIRE_FALSE(faults.empty());
  for (const auto& fault : faults) {
    CHECK(fault.at("layer") == "tcp");
    CHECK(fault.at("match") == 7);
  }
}

TEST_CASE("a filter that matches nothing leaves the program alone: the fault is not reached",
          "[integration][ofi]") {
  const PingPongRun run = run_pingpong(
      "rdm", R"({"faults": [{"status": "REM_ACCESS_ERR", "nth": 1, "layer": "verbs"}]})");
  INFO(run.server_output << run.client_output);
  CHECK(run.server_exit == 0);
  CHECK(run.client_exit == 0);
  CHECK(run.of("fault").empty());
  CHECK_FALSE(run.of("instrumented").empty());
}

TEST_CASE("a bad fault plan is named in the log, and the program runs unfaulted",
          "[integration][ofi]") {
  const PingPongRun run = run_pingpong("rdm", R"({"faults": [{"status": "NO_SUCH", "nth": 1}]})");
  const auto errors = run.of("plan_error");
  REQUIRE_FALSE(errors.empty());
  CHECK_THAT(errors.front().at("error").get<std::string>(),
             Catch::Contains("/faults/0/status") && Catch::Contains("error status name"));
  CHECK(run.of("fault").empty());
}
