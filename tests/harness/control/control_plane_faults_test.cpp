// The coordinator and agents as separate processes on 127.0.0.1, and what happens when a peer
// misbehaves: a wrong token, a client sending garbage, no coordinator at all (killed and
// stopped agents: harness_kill_test.cpp).

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "../harness_test_paths.hpp"
#include "control_peers.hpp"
#include "faultline/harness/control/auth.hpp"
#include "support/background_process.hpp"
#include "support/run_command.hpp"

using namespace std::chrono_literals;
using faultline::testing::BackgroundProcess;
using faultline::testing::closed_port;
using faultline::testing::RawClient;
using faultline::testing::read_text_file;
using faultline::testing::run_command;
using faultline::testing::start_agent;
using faultline::testing::start_coordinator;
using faultline::testing::TempDir;

TEST_CASE("an agent with the wrong token is refused and says so", "[integration][ofi][control]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "right-token", 2, "pingpong");
  const std::string token_file = dir.path() + "/wrong";
  std::ofstream(token_file) << "wrong-token\n";
  std::filesystem::permissions(token_file, std::filesystem::perms::owner_read);
  BackgroundProcess agent(kFaultline + " agent --coordinator 127.0.0.1:" +
                          std::to_string(coordinator.port) + " --token-file " + token_file);
  const auto code = agent.wait(10s);
  INFO(agent.err());
  REQUIRE(code.has_value());
  CHECK(*code != 0);
  CHECK_THAT(agent.err(), Catch::Contains("refused this agent"));
  CHECK_THAT(agent.err(), Catch::Contains("authentication failed: wrong token"));
  CHECK_THAT(agent.err(), !Catch::Contains("wrong-token"));
  CHECK(coordinator.process->wait_for_output("authentication failed: wrong token", 5s));
  CHECK_THAT(coordinator.process->err(), !Catch::Contains("right-token"));
}

TEST_CASE("the wrong-token scenario's own refused join is its finding, not a logged intrusion",
          "[integration][ofi][control]") {
  TempDir dir;
  BackgroundProcess run(kFaultline + " run control.wrong-token --report-dir " + dir.path());
  const auto code = run.wait(60s);
  INFO(run.out() << run.err());
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK_THAT(run.out(), Catch::Contains("control.wrong-token") && Catch::Contains("pass"));
  CHECK_THAT(run.err(), !Catch::Contains("authentication failed"));
  // The same token when no such scenario runs is an intruder's, and logged.
  auto coordinator = start_coordinator(dir, "right-token", 2, "pingpong");
  const std::string token_file = dir.path() + "/scenario-token";
  std::ofstream(token_file) << faultline::harness::control::kScenarioWrongToken << "\n";
  std::filesystem::permissions(token_file, std::filesystem::perms::owner_read);
  BackgroundProcess agent(kFaultline + " agent --coordinator 127.0.0.1:" +
                          std::to_string(coordinator.port) + " --token-file " + token_file);
  REQUIRE(agent.wait(10s).has_value());
  CHECK(coordinator.process->wait_for_output("authentication failed: wrong token", 5s));
}

TEST_CASE("a coordinator host that does not resolve is a usage error naming the name",
          "[integration][control]") {
  // In a network namespace of its own, so the lookup asks no DNS server anywhere.
  BackgroundProcess agent("FAULTLINE_TOKEN=t exec unshare -rn " + kFaultline +
                          " agent --coordinator no-such-host.invalid:7400 --connect-timeout 1");
  const auto code = agent.wait(30s);
  INFO(agent.err());
  REQUIRE(code.has_value());
  CHECK(*code == 2);
  CHECK_THAT(agent.err(), Catch::Contains("cannot resolve the coordinator's host in "
                                          "--coordinator no-such-host.invalid:7400"));
  CHECK_THAT(agent.err(), Catch::Contains("check the name for a typo"));
  CHECK_THAT(agent.err(), !Catch::Contains("firewall"));
}

TEST_CASE("every command holds a token file to one rule, in the same words",
          "[integration][control]") {
  TempDir dir;
  const std::string open_file = dir.path() + "/group-readable";
  std::ofstream(open_file) << "a-token\n";
  std::filesystem::permissions(open_file, std::filesystem::perms::owner_read |
                                              std::filesystem::perms::owner_write |
                                              std::filesystem::perms::group_read);
  const std::string locked = dir.path() + "/locked";  // root's, 0600: not another user's
  std::ofstream(locked) << "a-token\n";
  std::filesystem::permissions(
      locked, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
  const std::vector<std::pair<std::string, std::string>> files = {
      {dir.path(), ": a directory, not a file with the token"},
      {open_file, ": its group or others can read it (mode 0640)"},
      {dir.path() + "/missing", ": cannot read it: No such file or directory"}};
  const std::vector<std::string> commands = {"coordinator --agents 2 --listen 127.0.0.1:0",
                                             "agent --coordinator 127.0.0.1:1",
                                             "monitor --listen 127.0.0.1:0", "slurm"};
  for (const auto& [file, words] : files) {
    for (const auto& command : commands) {
      const auto result = run_command("exec " + kFaultline + " " + command + " --token-file " +
                                      file + (command == "slurm" ? " -- true" : ""));
      INFO(command << " " << file << "\n" << result.err);
      CHECK(result.exit_code == 2);
      CHECK_THAT(result.err, Catch::Contains("--token-file " + file + words));
    }
  }
  // A file this user cannot read, as another user would meet it (where that user can run the
  // build's binary at all).
  const std::string as_nobody = "exec setpriv --reuid=65534 --regid=65534 --clear-groups ";
  if (geteuid() == 0 && run_command(as_nobody + kFaultline + " --version").exit_code == 0) {
    const auto result = run_command(as_nobody + kFaultline +
                                    " agent --coordinator 127.0.0.1:1 --token-file " + locked);
    INFO(result.err);
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.err,
               Catch::Contains("--token-file " + locked + ": cannot read it: Permission denied"));
  }
}

TEST_CASE("an agent pointed at a closed port gives up within its budget, saying what it tried",
          "[integration][control]") {
  const std::string address = "127.0.0.1:" + std::to_string(closed_port());
  BackgroundProcess agent("FAULTLINE_TOKEN=t exec " + kFaultline + " agent --coordinator " +
                          address + " --connect-timeout 3");
  const auto started = std::chrono::steady_clock::now();
  const auto code = agent.wait(15s);
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
  INFO(agent.err());
  REQUIRE(code.has_value());
  CHECK(*code == 2);
  // The whole budget, not the last backoff short of it (3 s once gave up after 1.5 s).
  CHECK(seconds.count() >= 3);
  CHECK(seconds.count() < 6);
  CHECK_THAT(agent.err(), Catch::Contains("could not reach the coordinator at " + address));
  CHECK_THAT(agent.err(), Catch::Contains("attempts over"));
  CHECK_THAT(agent.err(), Catch::Contains("Connection refused"));
}

TEST_CASE("garbage, oversized, truncated and mistyped frames close only their connection",
          "[integration][ofi][control]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "token", 2, "pingpong");
  const auto port = coordinator.port;
  {
    RawClient garbage(port);
    garbage.send_frame("\x01\xff not json at all");
    CHECK(garbage.closed_by_peer());
  }
  {
    RawClient oversized(port);
    oversized.send_bytes("\xff\xff\xff\xff");
    CHECK(oversized.closed_by_peer());
  }
  {
    RawClient truncated(port);
    truncated.send_bytes(std::string("\x00\x00\x00\x64", 4) + "{\"type\":");
    truncated.finish_sending();
    CHECK(truncated.closed_by_peer());
  }
  {
    RawClient not_an_object(port);
    not_an_object.send_frame("[1,2,3]");
    CHECK(not_an_object.closed_by_peer());
  }
  {
    RawClient out_of_order(port);
    out_of_order.send_frame(R"({"type":"scenario_result","seq":0,"session":"","run_id":1,)"
                            R"("verdict":"pass"})");
    CHECK(out_of_order.closed_by_peer());
  }
  {
    RawClient wrong_field(port);
    wrong_field.send_frame(R"({"type":"auth","seq":0,"session":"","answer":7,"version":1,)"
                           R"("hello":{}})");
    CHECK(wrong_field.closed_by_peer());
  }
  auto first = start_agent(port, "token");
  auto second = start_agent(port, "token");
  const auto code = coordinator.process->wait(60s);
  const std::string log = coordinator.process->err();
  INFO(log);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK_THAT(log, Catch::Contains("is not valid JSON"));
  CHECK_THAT(log, Catch::Contains("exceeds the maximum"));
  CHECK_THAT(log, Catch::Contains("truncated"));
  CHECK_THAT(log, Catch::Contains("not an object"));
  CHECK_THAT(log, Catch::Contains("out of order"));
  CHECK_THAT(log, Catch::Contains("\"auth\" message lacks \"answer\""));
  const auto report = nlohmann::json::parse(read_text_file(dir.path() + "/report/report.json"));
  CHECK(report.at("scenarios").at(0).at("verdict") == "pass");
}
