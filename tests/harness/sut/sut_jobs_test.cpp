// A SUT scenario as a program job and back: what the coordinator sends and what it reports.
#include <catch2/catch.hpp>

#include "faultline/harness/sut/sut_jobs.hpp"

using namespace faultline::harness;
using nlohmann::json;

namespace {

sut::SutScenario client_server() {
  sut::SutScenario scenario;
  scenario.name = "pingpong";
  scenario.needs = "ofi";
  scenario.roles = {
      {"server", {"fi_pingpong", "-p", "tcp"}, json::array(), 0},
      {"client", {"fi_pingpong", "{address}"}, json::array({{{"kind", "drop"}}}), 200}};
  scenario.judged = "client";
  scenario.expect = "detected";
  scenario.deadline_seconds = 12.5;
  scenario.checker = {"ok", "wrong", "error"};
  return scenario;
}

}  // namespace

TEST_CASE("a SUT scenario's job carries each role's command, faults and deadline", "[unit]") {
  const ProgramJob job = sut::program_job(client_server());
  CHECK(job.kind == "ofi");
  CHECK(job.judged == "client");
  REQUIRE(job.roles.size() == 2);
  CHECK(job.roles[1].after_ms == 200);
  CHECK(job.roles[1].body.at("command") == json::array({"fi_pingpong", "{address}"}));
  CHECK(job.roles[1].body.at("faults").size() == 1);
  CHECK(job.roles[1].body.at("deadline_ms") == 12500);
  // Only the judged role is judged by the checker.
  CHECK(job.roles[1].body.at("checker").at("wrong") == "wrong");
  CHECK(job.roles[0].body.at("checker").empty());
}

TEST_CASE("a job's outcome becomes the scenario's: summaries checked, missing ones errors",
          "[unit]") {
  ProgramJobOutcome job;
  job.agents = {{"server", "agent-1"}, {"client", "agent-2"}};
  job.summaries["client"] = {{"verdict", "detected"},
                             {"seconds", 1.5},
                             {"faults_applied", 1},
                             {"log", "agent-2:/tmp/x"},
                             {"injected", "<not in the schema>"}};
  job.errors["server"] = "agent-1 lost: connection closed";
  const sut::ScenarioOutcome outcome = sut::scenario_outcome(client_server(), job);
  CHECK(outcome.result == "pass");
  CHECK(outcome.roles.at("client").at("agent") == "agent-2");
  CHECK_FALSE(outcome.roles.at("client").contains("injected"));
  CHECK(outcome.roles.at("server").at("verdict") == "error");
  CHECK(outcome.roles.at("server").at("evidence") == "agent-1 lost: connection closed");

  ProgramJobOutcome unplaced;
  unplaced.unplaced_result = "skip";
  unplaced.unplaced_reason = "agent-1 (host h) cannot run ofi programs";
  const sut::ScenarioOutcome skipped = sut::scenario_outcome(client_server(), unplaced);
  CHECK(skipped.result == "skip");
  CHECK(skipped.reason == unplaced.unplaced_reason);
}

TEST_CASE("a role's body a coordinator got wrong starts nothing and says what is wrong", "[unit]") {
  sut::SutRoleLauncher launcher("/nonexistent/faultline");
  const json good = sut::program_job(client_server()).roles[0].body;
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, json>>{{"command", json::array()},
                                                 {"command", json::array({"ok", 3})},
                                                 {"faults", "none"},
                                                 {"deadline_ms", -1}}) {
    json body = good;
    body[key] = value;
    const auto started = launcher.start(body, "1", "127.0.0.1", "/nonexistent/dir");
    REQUIRE_FALSE(started.ok());
    CHECK_THAT(started.error().message, Catch::Contains("run_program"));
  }
}
