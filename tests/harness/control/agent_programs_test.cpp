// What a token holder can make an agent do with the programs of its SUT scenarios (SECURITY.md):
// values that are a port and an address and nothing else, relayed by a coordinator only when
// they are; a role once per run; and a swept role stopped with everything it started when
// the coordinator aborts it, shuts the agent down, or the agent is killed.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "../harness_test_paths.hpp"
#include "../sut/sut_runs.hpp"
#include "control_peers.hpp"
#include "faultline/harness/sut/sut_scenario.hpp"
#include "support/run_command.hpp"

using namespace std::chrono_literals;
using faultline::testing::await_from_agent;
using faultline::testing::BackgroundProcess;
using faultline::testing::FakeCoordinator;
using faultline::testing::handshake_as_coordinator;
using faultline::testing::RawAgent;
using faultline::testing::read_text_file;
using faultline::testing::run_command;
using faultline::testing::start_coordinator;
using faultline::testing::TempDir;

namespace {

// A SUT scenario of the agent's own whose one role runs a shell with {port} and {address} in
// its script: what reaches the script is what a token holder could make the agent run.
faultline::harness::sut::SutScenario echo_scenario(const TempDir& dir) {
  const nlohmann::json scenario = {
      {"name", "sut.own.echo"},
      {"description", "prints the values it was given"},
      {"needs", "ofi"},
      {"roles",
       {{{"name", "client"},
         {"command", {"sh", "-c", "echo {port} {address} >> " + dir.path() + "/args"}}}}},
      {"judged", "client"},
      {"expect", "pass"},
      {"deadline_s", 10},
      {"grace_s", 1}};
  std::ofstream(dir.path() + "/own.json") << scenario.dump(2);
  auto loaded = faultline::harness::sut::load_sut_scenario(dir.path() + "/own.json");
  REQUIRE(loaded.ok());
  return loaded.value();
}

nlohmann::json run_program_of(const faultline::harness::sut::SutScenario& scenario, uint64_t run_id,
                              const nlohmann::json& values) {
  return {{"run_id", run_id},
          {"job", "own"},
          {"role", "client"},
          {"body", {{"scenario", scenario.name}, {"sha256", scenario.sha256}, {"role", "client"}}},
          {"values", values},
          {"listens", false}};
}

}  // namespace

TEST_CASE("a token holder's port and address reach a role only as a port and an address",
          "[integration][ofi][control]") {
  TempDir dir;
  const auto scenario = echo_scenario(dir);
  const std::string marker = dir.path() + "/PWN";
  FakeCoordinator fake;
  BackgroundProcess agent("FAULTLINE_TOKEN=the-token exec " + kFaultline +
                          " agent --coordinator 127.0.0.1:" + std::to_string(fake.port()) +
                          " --sut-scenarios " + dir.path() + "/own.json");
  auto channel = fake.accept_agent();
  handshake_as_coordinator(*channel, "the-token");
  // Each once ran as root: a command after ';', an option instead of a port or an address, a
  // port holding its own placeholder (the agent expanded it forever at 100% CPU).
  uint64_t run_id = 1;
  for (const nlohmann::json& hostile :
       {nlohmann::json{{"port", "1; touch " + marker + " #"}, {"address", "127.0.0.1"}},
        nlohmann::json{{"port", 7300}, {"address", "127.0.0.1; touch " + marker}},
        nlohmann::json{{"port", "--help"}, {"address", "127.0.0.1"}},
        nlohmann::json{{"port", 7300}, {"address", "-rf"}},
        nlohmann::json{{"port", "{port}"}, {"address", "127.0.0.1"}},
        nlohmann::json{{"port", 7300}, {"address", "{address}"}},
        nlohmann::json{{"port", 70000}, {"address", "127.0.0.1"}},
        nlohmann::json{{"port", 0}, {"address", "127.0.0.1"}},
        nlohmann::json{{"port", 7300}, {"address", "$(touch " + marker + ")"}}}) {
    CAPTURE(hostile.dump());
    const auto sent = std::chrono::steady_clock::now();
    REQUIRE(channel->send_message("run_program", run_program_of(scenario, run_id++, hostile)).ok());
    const nlohmann::json result = await_from_agent(*channel, "program_result");
    CHECK(std::chrono::steady_clock::now() - sent < 2s);
    CHECK(result.at("summary").at("verdict") == "error");
    CHECK_THAT(result.at("summary").at("evidence").get<std::string>(),
               Catch::StartsWith("run_program refused: values/"));
  }
  // A port and an address: the role runs with exactly those. The same role of the same run
  // again is refused at once, not queued behind the first.
  const nlohmann::json values = {{"port", 7300}, {"address", "169.254.0.2"}};
  REQUIRE(channel->send_message("run_program", run_program_of(scenario, run_id, values)).ok());
  CHECK(await_from_agent(*channel, "program_started").at("values") == values);
  REQUIRE(channel->send_message("run_program", run_program_of(scenario, run_id, values)).ok());
  const nlohmann::json twice = await_from_agent(*channel, "program_result");
  CHECK_THAT(twice.at("summary").at("evidence").get<std::string>(),
             Catch::Contains("already runs here"));
  CHECK(await_from_agent(*channel, "program_result").at("summary").at("verdict") == "pass");
  CHECK(read_text_file(dir.path() + "/args") == "7300 169.254.0.2\n");
  CHECK_FALSE(std::filesystem::exists(marker));
  (void)channel->send_message("shutdown");
  CHECK(agent.wait(10s).has_value());
}

namespace {

// Two roles in dir/sut/pair.json: the first (the server) on the rogue (it joins first, named
// ahead), the second on a real agent, given the first's port and address.
void write_pair_scenario(const TempDir& dir, const std::string& judged) {
  std::filesystem::create_directories(dir.path() + "/sut");
  const nlohmann::json scenario = {
      {"name", "sut.own.pair"},
      {"description", "a server and a client that prints what it was given"},
      {"needs", "ofi"},
      {"roles",
       {{{"name", "server"}, {"command", {"sleep", "5"}}},
        {{"name", "client"},
         {"command", {"sh", "-c", "echo {port} {address} >> " + dir.path() + "/args"}}}}},
      {"judged", judged},
      {"expect", "pass"},
      {"deadline_s", 10},
      {"grace_s", 1}};
  std::ofstream(dir.path() + "/sut/pair.json") << scenario.dump(2);
}

// A coordinator of dir/sut, a rogue agent (it joins first: the server's role is its) and a
// real agent with its own copy of the scenarios.
struct RogueAndReal {
  explicit RogueAndReal(const TempDir& dir)
      : coordinator(start_coordinator(dir, "token", 2, "--suite sut --scenario-dir " + dir.path())),
        rogue(coordinator.port,
              {{"host", "rogue"}, {"pid", 1}, {"name", "a-rogue"}, {"programs", {"ofi"}}}),
        welcomed(rogue.answer().at("type") == "welcome"),
        real("FAULTLINE_TOKEN=token exec " + kFaultline +
             " agent --name b-real --coordinator 127.0.0.1:" + std::to_string(coordinator.port) +
             " --sut-scenarios " + dir.path() + "/sut") {
    REQUIRE(welcomed);
  }
  faultline::testing::CoordinatorProcess coordinator;
  RawAgent rogue;
  bool welcomed;
  BackgroundProcess real;
};

}  // namespace

TEST_CASE("a rogue agent's program_started is not relayed: the other agent runs nothing it says",
          "[integration][ofi][control]") {
  TempDir dir;
  write_pair_scenario(dir, "client");
  const std::string marker = dir.path() + "/PWN";
  RogueAndReal pair(dir);
  auto& coordinator = pair.coordinator;
  auto& rogue = pair.rogue;
  auto& real = pair.real;
  const auto asked = rogue.await("run_program");
  CHECK(asked.at("role") == "server");
  rogue.send({{"type", "program_started"},
              {"run_id", asked.at("run_id")},
              {"role", "server"},
              {"values", {{"port", "1; touch " + marker + " #"}, {"address", "127.0.0.1"}}}});
  CHECK(rogue.await("abort_scenario").at("run_id") == asked.at("run_id"));
  const auto code = coordinator.process->wait(60s);
  INFO(coordinator.process->out() << coordinator.process->err() << real.err());
  REQUIRE(code.has_value());
  CHECK(*code != 0);
  CHECK_FALSE(std::filesystem::exists(marker));
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/args"));  // the client never started
  const auto report = nlohmann::json::parse(read_text_file(dir.path() + "/report/report.json"));
  CHECK_THAT(report.dump(),
             Catch::Contains("answered program_started with what no program may be given: "
                             "values/port"));
}

TEST_CASE("a rogue agent's program_result reaches the terminal and the reports only as text",
          "[integration][ofi][control]") {
  TempDir dir;
  write_pair_scenario(dir, "server");
  RogueAndReal pair(dir);
  auto& coordinator = pair.coordinator;
  auto& rogue = pair.rogue;
  auto& real = pair.real;
  const auto asked = rogue.await("run_program");
  const nlohmann::json values = {{"port", 7301}, {"address", "127.0.0.1"}};
  rogue.send({{"type", "program_started"},
              {"run_id", asked.at("run_id")},
              {"role", "server"},
              {"values", values}});
  // The terminal's title, a cleared screen and colours, in each text a summary carries.
  rogue.send({{"type", "program_result"},
              {"run_id", asked.at("run_id")},
              {"role", "server"},
              {"summary",
               {{"verdict", "fail"},
                {"seconds", 1},
                {"faults_applied", 0},
                {"evidence",
                 "\x1b]0;owned\x07"
                 "evidence"},
                {"first_error_line", "\x1b[2Jcleared"},
                {"hint", "\x1b[31mred"},
                {"log", "/tmp/\x1b[1mlog"}}}});
  const auto code = coordinator.process->wait(60s);
  INFO(coordinator.process->out() << coordinator.process->err() << real.err());
  REQUIRE(code.has_value());
  CHECK(*code == 1);  // the judged role failed
  CHECK(read_text_file(dir.path() + "/args") == "7301 127.0.0.1\n");
  for (const std::string& text : {coordinator.process->out(), coordinator.process->err(),
                                  read_text_file(dir.path() + "/report/summary.md"),
                                  read_text_file(dir.path() + "/report/junit.xml"),
                                  read_text_file(dir.path() + "/report/report.json")})
    CHECK(text.find('\x1b') == std::string::npos);
  const auto report = nlohmann::json::parse(read_text_file(dir.path() + "/report/report.json"));
  CHECK_THAT(report.dump(), Catch::Contains("\\\\e]0;owned\\\\x07evidence"));
}

#ifdef FAULTLINE_SUT_OFI_SUM_CHECKED

TEST_CASE("a swept role stops with all it started: abort_scenario, shutdown, the agent's SIGTERM",
          "[integration][ofi][control]") {
  for (const std::string how : {"abort_scenario", "shutdown", "SIGTERM"}) {
    CAPTURE(how);
    TempDir dir;
    // The clean run leaves `clean`; a point's run then waits in two sleeps after the program.
    const std::string mark = "sleep 32" + std::to_string(how.size()) + ".5";
    const nlohmann::json scenario = {
        {"name", "sut.own.swept"},
        {"description", "a program that hangs in two processes once swept"},
        {"needs", "ofi"},
        {"roles",
         {{{"name", "ranks"},
           {"command",
            {"sh", "-c",
             std::string(FAULTLINE_SUT_OFI_SUM_CHECKED) + "; if [ -e " + dir.path() +
                 "/clean ]; then " + mark + " & " + mark + "; fi; touch " + dir.path() +
                 "/clean"}}}}},
        {"checker", {{"ok", faultline::testing::ofi_sum_line()}}},
        {"sweep", {{"max_points", 3}, {"deadline_s", 120}}},
        {"deadline_s", 300}};
    std::ofstream(dir.path() + "/swept.json") << scenario.dump(2);
    auto loaded = faultline::harness::sut::load_sut_scenario(dir.path() + "/swept.json");
    REQUIRE(loaded.ok());
    FakeCoordinator fake;
    BackgroundProcess agent("FAULTLINE_TOKEN=t exec " + kFaultline +
                            " agent --coordinator 127.0.0.1:" + std::to_string(fake.port()) +
                            " --sut-scenarios " + dir.path() + "/swept.json");
    auto channel = fake.accept_agent();
    handshake_as_coordinator(*channel, "t");
    REQUIRE(channel
                ->send_message(
                    "run_program",
                    {{"run_id", 1},
                     {"job", "swept"},
                     {"role", "ranks"},
                     {"body",
                      {{"scenario", loaded->name}, {"sha256", loaded->sha256}, {"role", "ranks"}}},
                     {"values", nlohmann::json::object()},
                     {"listens", false}})
                .ok());
    await_from_agent(*channel, "program_started");
    const auto running = [&] { return !run_command("pgrep -f '^" + mark + "'").out.empty(); };
    for (int i = 0; i < 300 && !running(); ++i) std::this_thread::sleep_for(100ms);
    REQUIRE(running());
    if (how == "abort_scenario") {
      REQUIRE(channel->send_message("abort_scenario", {{"run_id", 1}}).ok());
      CHECK(await_from_agent(*channel, "program_result").at("run_id") == 1);
    } else if (how == "shutdown") {
      REQUIRE(channel->send_message("shutdown").ok());
      CHECK(agent.wait(60s).has_value());
    } else {
      agent.kill(SIGTERM);
    }
    // Nothing of it is left: not the ranks, the point's `sut exec`, nor the sweep (each holds
    // the command line with the mark). The bracket keeps pgrep's own shell out of it.
    const std::string pattern = "[" + mark.substr(0, 1) + "]" + mark.substr(1);
    bool left = true;
    for (int i = 0; i < 600 && left; ++i) {
      left = !run_command("pgrep -f '" + pattern + "'").out.empty();
      if (left) std::this_thread::sleep_for(100ms);
    }
    CHECK_FALSE(left);
  }
}

#endif
