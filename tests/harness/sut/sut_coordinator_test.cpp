// SUT scenarios across agents: `faultline coordinator --suite sut` places each role on an
// agent (server on one, client on the other), hands the server's port and address to the
// client, and the report says which agent ran which program; an agent runs programs only when
// given SUT scenarios of its own.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "support/background_process.hpp"
#include "support/local_port.hpp"

using faultline::testing::BackgroundProcess;
using faultline::testing::read_text_file;
using faultline::testing::TempDir;

namespace {

struct SuiteRun {
  int exit_code = -1;
  nlohmann::json report;
};

// `coordinator --suite sut` over the shipped scenarios `files` (copied into DIR/sut), with two
// agents given `agent_options`: its exit code and report once it ended (within `wait`).
SuiteRun run_sut_suite(const TempDir& dir, const std::vector<std::string>& files,
                       const std::string& agent_options,
                       std::chrono::seconds wait = std::chrono::seconds(90)) {
  namespace fs = std::filesystem;
  fs::create_directories(dir.path() + "/sut");
  const std::string shipped = std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/sut/";
  for (const auto& file : files) fs::copy_file(shipped + file, dir.path() + "/sut/" + file);
  const std::string faultline = FAULTLINE_BINARY;
  BackgroundProcess coordinator("FAULTLINE_TOKEN=t exec " + faultline +
                                " coordinator --listen 127.0.0.1:0 --agents 2 --suite sut "
                                "--scenario-dir " +
                                dir.path() + " --port-file " + dir.path() + "/port --report-dir " +
                                dir.path() + "/report");
  const std::string port = faultline::testing::wait_for_port_file(dir.path() + "/port");
  REQUIRE_FALSE(port.empty());
  const std::string agent = "FAULTLINE_TOKEN=t exec " + faultline +
                            " agent --coordinator 127.0.0.1:" + port + agent_options;
  // Named against their join order: the roles go by name (node-1 first) whoever joins first.
  BackgroundProcess first(agent + " --name node-2");
  BackgroundProcess second(agent + " --name node-1");
  const auto exit_code = coordinator.wait(wait);
  INFO(coordinator.out() << coordinator.err() << first.err() << second.err());
  REQUIRE(exit_code.has_value());
  return {*exit_code, nlohmann::json::parse(read_text_file(dir.path() + "/report/report.json"))};
}

}  // namespace

TEST_CASE("coordinator --suite sut runs each role on its agent", "[integration][ofi]") {
  TempDir dir;
  const auto [exit_code, report] =
      run_sut_suite(dir,
                    {"fi-pingpong-rdm-completion-error.json", "rc-pingpong-completion-error.json",
                     "ofi-sum-sweep.json"},
                    " --sut-scenarios " + dir.path() + "/sut");
  CHECK(exit_code == 0);
  REQUIRE(report.at("scenarios").size() == 3);
  for (const auto& scenario : report.at("scenarios")) {
    INFO(scenario.dump(2).substr(0, 3000));
    if (scenario.at("id") == "sut.ofi-sum.sweep") {
      // A sweep block: the agent ran `sut sweep`, each point detected or masked.
      CHECK(scenario.at("verdict") == "pass");
      const auto& program = scenario.at("sut").at("roles").at("program");
      CHECK(program.at("faults_applied") == 6);
      CHECK_THAT(program.at("evidence").get<std::string>(), Catch::StartsWith("6 fault points:"));
    } else if (scenario.at("id") == "sut.fi-pingpong.rdm.completion-error") {
      CHECK(scenario.at("verdict") == "pass");
      const auto& roles = scenario.at("sut").at("roles");
      CHECK(roles.at("server").at("agent") == "node-1");
      CHECK(roles.at("client").at("agent") == "node-2");
      CHECK(roles.at("client").at("verdict") == "detected");
      CHECK(roles.at("client").at("faults_applied") == 1);
      // The server, left waiting on node-1, was stopped after the grace: its stacks came back.
      // (Or its next read saw the client's connection close first, fi_pingpong's own race:
      // once in the asan lane beside the soak, "cq_readerr: Broken pipe", exit 107.)
      const auto& server = roles.at("server");
      if (server.at("verdict") == "fail") {
        CHECK_THAT(server.at("first_error_line").get<std::string>(), Catch::Contains("cq_readerr"));
      } else {
        CHECK(server.at("verdict") == "hang");
        // A stopped peer's stacks: the innermost frame of each of its threads, from /proc.
        CHECK_THAT(server.at("stacks").get<std::string>(),
                   Catch::Contains("innermost frames from /proc") && Catch::Contains("Thread ") &&
                       Catch::Contains("#0 "));
      }
      CHECK_THAT(roles.at("server").at("log").get<std::string>(), Catch::StartsWith("node-1:/"));
    } else {
      // The agents said in their hello what they can run; no verbs device on this host.
      CHECK(scenario.at("verdict") == "skip");
      CHECK_THAT(scenario.at("observed").get<std::string>(),
                 Catch::Contains("cannot run verbs programs"));
    }
  }
}

TEST_CASE("an agent started without --sut-scenarios runs no program: the scenario is skipped",
          "[integration][ofi]") {
  TempDir dir;
  const auto report = run_sut_suite(dir, {"fi-pingpong-rdm-completion-error.json"}, "").report;
  REQUIRE(report.at("scenarios").size() == 1);
  const auto& scenario = report.at("scenarios").at(0);
  CHECK(scenario.at("verdict") == "skip");
  CHECK_THAT(scenario.at("observed").get<std::string>(),
             Catch::Contains("cannot run ofi programs") && Catch::Contains("--sut-scenarios"));
}

TEST_CASE("coordinator --suite sut runs a program that failed by itself, no fault fired, again",
          "[integration][ofi]") {
  // A program that fails its first run and passes its second, as StepMesh's clean runs do one
  // time in ten: `sut run`'s retry rule, on the agents too.
  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/sut");
  const std::string marker = dir.path() + "/ran-once";
  std::ofstream(dir.path() + "/sut/flaky.json") << nlohmann::json{
      {"name", "sut.flaky"},
      {"needs", "ofi"},
      {"roles",
       {{{"name", "program"},
         {"command",
          {"sh", "-c",
           "if [ -e " + marker + " ]; then echo fine; else touch " + marker + "; exit 1; fi"}}}}},
      {"checker", {{"ok", "fine"}}},
      {"expect", "pass"},
      {"deadline_s", 30}}.dump();
  const auto [exit_code, report] =
      run_sut_suite(dir, {}, " --sut-scenarios " + dir.path() + "/sut");
  CHECK(exit_code == 0);
  REQUIRE(report.at("scenarios").size() == 1);
  const auto& scenario = report.at("scenarios").at(0);
  INFO(scenario.dump(2));
  CHECK(scenario.at("verdict") == "pass");
  CHECK_THAT(scenario.at("evidence").get<std::string>(),
             Catch::Contains("first attempt: ") && Catch::Contains("run again"));
}

#ifdef FAULTLINE_SUT_STEPMESH_DEFAULT
TEST_CASE(
    "coordinator --suite sut places StepMesh's scheduler, server and worker on agents, the "
    "seed's second symptom among them",
    "[integration][verbs][long][stepmesh]") {
  // StepMesh aborts by itself about one run in ten (rdma_van.h:785, a flushed completion
  // before its first push). A scenario expecting a pass runs again then (the retry rule);
  // one expecting the server's own abort got an abort, but not the one asked about: the suite
  // runs once more, until the server stops where the seed report says. Beside CI's sanitizer
  // builds a clean StepMesh run took up to 52 s in the guest: each suite gets 140 s.
  const auto flushed_before_push = [](const nlohmann::json& report) {
    for (const auto& scenario : report.at("scenarios"))
      for (const auto& [name, role] : scenario.at("sut").at("roles").items())
        if (role.value("first_error_line", "").find("rdma_van.h:785") != std::string::npos)
          return true;
    return false;
  };
  std::optional<TempDir> dir;
  SuiteRun run;
  for (int attempt = 0; attempt < 2 && (attempt == 0 || flushed_before_push(run.report));
       ++attempt) {
    dir.emplace();
    run = run_sut_suite(*dir,
                        {"stepmesh-rdma-inline-off.json", "stepmesh-rdma-push-without-lens.json"},
                        " --sut-scenarios " + dir->path() + "/sut", std::chrono::seconds(140));
  }
  const auto& [exit_code, report] = run;
  CHECK(exit_code == 0);
  REQUIRE(report.at("scenarios").size() == 2);
  for (const auto& scenario : report.at("scenarios")) {
    INFO(scenario.dump(2).substr(0, 4000));
    // Each reached its expected verdict (below), one about-to-be-retried attempt aside.
    CHECK(scenario.at("verdict") == "pass");
    // Role i on agent i mod 2: the scheduler's address ({address}, the device's, where rdma_cm
    // connects) handed to the others.
    const auto& roles = scenario.at("sut").at("roles");
    CHECK(roles.at("scheduler").at("agent") == "node-1");
    CHECK(roles.at("server").at("agent") == "node-2");
    CHECK(roles.at("worker").at("agent") == "node-1");
    if (scenario.at("id") == "sut.stepmesh.rdma.inline-off") {
      CHECK(roles.at("worker").at("verdict") == "pass");
    } else {
      // The server's own check, the seed report's second symptom.
      CHECK(roles.at("server").at("verdict") == "fail");
      CHECK_THAT(roles.at("server").at("first_error_line").get<std::string>(),
                 Catch::Contains("(buffer_ctx->data_num) == (3)"));
    }
  }
}
#endif  // FAULTLINE_SUT_STEPMESH_DEFAULT
