// A SUT scenario as a program job and back: what the coordinator sends and what it reports.
#include <catch2/catch.hpp>

#include "faultline/harness/sut/sut_jobs.hpp"
#include "support/background_process.hpp"

using namespace faultline::harness;
using nlohmann::json;

namespace {

sut::SutScenario client_server() {
  sut::SutScenario scenario;
  scenario.name = "pingpong";
  scenario.sha256 = "5ca1ab1e";
  scenario.needs = "ofi";
  scenario.roles = {
      {"server", {"fi_pingpong", "-p", "tcp"}, json::array(), 0, true},
      {"client", {"fi_pingpong", "{address}"}, json::array({{{"kind", "drop"}}}), 200}};
  scenario.judged = "client";
  scenario.expect = "detected";
  scenario.deadline_seconds = 12.5;
  scenario.checker = {"ok", "wrong", "error"};
  return scenario;
}

}  // namespace

TEST_CASE("a SUT scenario's job names the scenario and the role, never a command", "[unit]") {
  const ProgramJob job = sut::program_job(client_server());
  CHECK(job.kind == "ofi");
  CHECK(job.judged == "client");
  CHECK(job.deadline_seconds == 12.5);
  REQUIRE(job.roles.size() == 2);
  CHECK(job.roles[1].after_ms == 200);
  CHECK(job.roles[0].listens);
  CHECK_FALSE(job.roles[1].listens);
  CHECK(job.roles[1].body ==
        json{{"scenario", "pingpong"}, {"sha256", "5ca1ab1e"}, {"role", "client"}});
}

TEST_CASE("a job's outcome becomes the scenario's: summaries checked, missing ones errors",
          "[unit]") {
  ProgramJobOutcome job;
  job.agents = {{"server", "node-1"}, {"client", "node-2"}};
  job.summaries["client"] = {{"verdict", "detected"},
                             {"seconds", 1.5},
                             {"faults_applied", 1},
                             {"log", "node-2:/tmp/x"},
                             {"injected", "<not in the schema>"}};
  job.errors["server"] = "node-1 lost: connection closed";
  const sut::ScenarioOutcome outcome = sut::scenario_outcome(client_server(), job);
  CHECK(outcome.result == "pass");
  CHECK(outcome.roles.at("client").at("agent") == "node-2");
  CHECK_FALSE(outcome.roles.at("client").contains("injected"));
  CHECK(outcome.roles.at("server").at("verdict") == "error");
  CHECK(outcome.roles.at("server").at("evidence") == "node-1 lost: connection closed");

  ProgramJobOutcome unplaced;
  unplaced.unplaced_result = "skip";
  unplaced.unplaced_reason = "node-1 (host h) cannot run ofi programs";
  const sut::ScenarioOutcome skipped = sut::scenario_outcome(client_server(), unplaced);
  CHECK(skipped.result == "skip");
  CHECK_THAT(skipped.reason,
             Catch::StartsWith(unplaced.unplaced_reason) && Catch::Contains("--sut-scenarios"));
}

TEST_CASE(
    "a role that stops on its own check after a peer's fault detected it, without one "
    "it failed",
    "[unit]") {
  // StepMesh: the worker's rewrite_field fired, the server's own check aborted it.
  sut::SutScenario scenario = client_server();
  scenario.judged = "server";
  const auto outcome_of = [&](uint64_t client_faults) {
    ProgramJobOutcome job;
    job.summaries["server"] = {
        {"verdict", "fail"},
        {"seconds", 2},
        {"faults_applied", 0},
        {"first_error_line", "rdma_transport.h:807: Check failed: (data_num) == (3)"},
        {"evidence", "aborted (SIGABRT) by its own check, no fault having fired"}};
    job.summaries["client"] = {
        {"verdict", "crashed"}, {"seconds", 2}, {"faults_applied", client_faults}};
    return sut::scenario_outcome(scenario, job);
  };
  const sut::ScenarioOutcome detected = outcome_of(1);
  CHECK(detected.verdict == "detected");
  CHECK(detected.result == "pass");
  CHECK(detected.roles.at("server").at("verdict") == "detected");
  CHECK_THAT(detected.roles.at("server").at("evidence").get<std::string>(),
             Catch::Contains("after 1 fault(s) fired in client") &&
                 Catch::Contains("rdma_transport.h:807"));
  // No fault fired anywhere: the program failed by itself.
  const sut::ScenarioOutcome failed = outcome_of(0);
  CHECK(failed.verdict == "fail");
  CHECK(failed.result == "fail");
}

TEST_CASE("an agent starts only roles of its own scenarios, as its own copy says", "[unit]") {
  sut::SutRoleLauncher launcher("/nonexistent/faultline", {client_server()}, "/etc/sut");
  const faultline::testing::TempDir dir;
  const auto start = [&](const json& body) {
    return launcher.start(body, "1", "127.0.0.1", dir.path() + "/role");
  };
  const auto unknown = start({{"scenario", "other"}, {"sha256", "5ca1ab1e"}, {"role", "client"}});
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.error().message,
             Catch::Contains("no SUT scenario \"other\" among this agent's (/etc/sut)"));
  const auto changed = start({{"scenario", "pingpong"}, {"sha256", "0ther"}, {"role", "client"}});
  REQUIRE_FALSE(changed.ok());
  CHECK_THAT(changed.error().message, Catch::Contains("differs from the coordinator's"));
  const auto no_role = start({{"scenario", "pingpong"}, {"sha256", "5ca1ab1e"}, {"role", "x"}});
  REQUIRE_FALSE(no_role.ok());
  CHECK_THAT(no_role.error().message, Catch::Contains("has no role \"x\""));
  // A command in the body is not read: the role starts from the agent's copy (here the binary
  // does not exist, so its exec says so).
  const auto commanded = start({{"scenario", "pingpong"},
                                {"sha256", "5ca1ab1e"},
                                {"role", "client"},
                                {"command", {"sh", "-c", "id"}}});
  REQUIRE_FALSE(commanded.ok());
  CHECK_THAT(commanded.error().describe(), Catch::Contains("/nonexistent/faultline"));
}

TEST_CASE("placeholders are expanded once, each into its own argument", "[unit]") {
  // A port holding "{port}" looped the agent at 100% CPU; a {bin} under a folder named {bin}
  // grew its memory until bad_alloc.
  sut::Placeholders values;
  values.port = "{port}";
  values.address = "a b;c";
  values.bin = "/opt/{bin}";
  const auto expanded = sut::expand({"{bin}/app", "-p", "{port}:{port}", "{address}"}, values);
  CHECK(expanded == std::vector<std::string>{"/opt/{bin}/app", "-p", "{port}:{port}", "a b;c"});
}
