// The control channel against peers that are not what they claim: replayed handshakes, a
// coordinator without the token, silent and slow peers, floods of wrong tokens, hostile frames
// and scenarios; the token kept out of everything faultline writes; a read-only metrics
// endpoint.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

#include "../harness_test_paths.hpp"
#include "control_peers.hpp"
#include "faultline/harness/control/auth.hpp"
#include "faultline/harness/control/channel.hpp"
#include "faultline/harness/runs/report_reader.hpp"
#include "support/local_port.hpp"
#include "support/run_command.hpp"

using namespace std::chrono_literals;
using faultline::testing::auth_for;
using faultline::testing::await_from_agent;
using faultline::testing::BackgroundProcess;
using faultline::testing::FakeCoordinator;
using faultline::testing::free_port;
using faultline::testing::handshake_as_coordinator;
using faultline::testing::joined_raw_client;
using faultline::testing::RawAgent;
using faultline::testing::RawClient;
using faultline::testing::read_text_file;
using faultline::testing::resident_kib;
using faultline::testing::run_command;
using faultline::testing::start_agent;
using faultline::testing::start_coordinator;
using faultline::testing::TempDir;

TEST_CASE("a replayed auth is refused: every connection has its own nonce",
          "[integration][ofi][control]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "token", 2, "pingpong");
  nlohmann::json recorded;
  {
    RawClient first(coordinator.port);
    const auto challenge = first.read_message(5s);
    REQUIRE(challenge);
    recorded = auth_for(*challenge, "token");
    first.send_message(recorded);
    const auto welcome = first.read_message(5s);
    REQUIRE(welcome);
    CHECK(welcome->at("type") == "welcome");
    // The same auth again on the authenticated connection is out of order: closed.
    first.send_message(recorded);
    CHECK(first.closed_by_peer());
  }
  RawClient replay(coordinator.port);
  const auto challenge = replay.read_message(5s);
  REQUIRE(challenge);
  replay.send_message(recorded);  // the answer to another connection's nonce
  const auto answer = replay.read_message(5s);
  REQUIRE(answer);
  CHECK(answer->at("type") == "reject");
  CHECK(answer->at("reason") == "authentication failed: wrong token");
  CHECK(replay.closed_by_peer());
}

TEST_CASE("an agent does not trust a coordinator that cannot prove the token",
          "[integration][ofi][control]") {
  FakeCoordinator fake;
  BackgroundProcess agent("FAULTLINE_TOKEN=the-token exec " + kFaultline +
                          " agent --coordinator 127.0.0.1:" + std::to_string(fake.port()));
  auto channel = fake.accept_agent();
  handshake_as_coordinator(*channel, "another-token");
  const auto code = agent.wait(10s);
  INFO(agent.err());
  REQUIRE(code.has_value());
  CHECK(*code == 2);
  CHECK_THAT(agent.err(), Catch::Contains("did not prove it knows the token; not trusting it"));
  CHECK_THAT(agent.err(), !Catch::Contains("the-token"));
}

TEST_CASE("a scenario from the coordinator that breaks the schema runs none of it",
          "[integration][ofi][control]") {
  TempDir dir;
  const std::string marker = dir.path() + "/touched";
  FakeCoordinator fake;
  BackgroundProcess agent("FAULTLINE_TOKEN=the-token exec " + kFaultline +
                          " agent --coordinator 127.0.0.1:" + std::to_string(fake.port()));
  auto channel = fake.accept_agent();
  handshake_as_coordinator(*channel, "the-token");
  // Ops and fields no scenario has: a command, a file, a path outside any report directory.
  const nlohmann::json document = {
      {"id", "hostile"},
      {"title", "tries to run a command and write a file"},
      {"tags", {"hostile"}},
      {"roles", {{"initiator", nlohmann::json::object()}, {"responder", nlohmann::json::object()}}},
      {"steps",
       {{{"op", "exec"}, {"command", "touch " + marker}},
        {{"op", "create_endpoint"}, {"output", marker}},
        {{"op", "register"}, {"buffer", "../../" + marker}, {"bytes", 8}}}}};
  REQUIRE(channel
              ->send_message("run_scenario",
                             {{"run_id", 1},
                              {"scenario", "hostile"},
                              {"role", "initiator"},
                              {"params", {{"role_name", "initiator"}, {"document", document}}},
                              {"target", nlohmann::json::object()},
                              {"deadline_ms", 10000}})
              .ok());
  const nlohmann::json result = await_from_agent(*channel, "scenario_result");
  CAPTURE(result.dump(2));
  CHECK(result.at("verdict") == "error");
  CHECK_THAT(result.at("observed").get<std::string>(),
             Catch::Contains("breaks the scenario schema, so none of it ran"));
  CHECK_FALSE(std::filesystem::exists(marker));
  (void)channel->send_message("shutdown");
  CHECK(agent.wait(10s).has_value());
}

TEST_CASE("a token holder cannot make an agent run a command, only roles of its own scenarios",
          "[integration][ofi][control]") {
  TempDir dir;
  const std::string marker = dir.path() + "/touched";
  std::filesystem::copy_file(
      std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/sut/fi-pingpong-rdm-completion-error.json",
      dir.path() + "/own.json");
  for (const std::string& opt_in :
       {std::string(), " --sut-scenarios " + dir.path() + "/own.json"}) {
    FakeCoordinator fake;
    BackgroundProcess agent("FAULTLINE_TOKEN=the-token exec " + kFaultline +
                            " agent --coordinator 127.0.0.1:" + std::to_string(fake.port()) +
                            opt_in);
    auto channel = fake.accept_agent();
    const nlohmann::json auth = handshake_as_coordinator(*channel, "the-token");
    // Only the opted-in agent offers programs at all.
    CHECK(auth.at("hello").at("programs").empty() == opt_in.empty());
    const nlohmann::json command = {"sh", "-c", "touch " + marker};
    REQUIRE(channel
                ->send_message("run_program",
                               {{"run_id", 1},
                                {"job", "hostile"},
                                {"role", "client"},
                                {"body", {{"scenario", "hostile"}, {"command", command}}},
                                {"values", nlohmann::json::object()},
                                {"listens", true}})
                .ok());
    const nlohmann::json result = await_from_agent(*channel, "program_result");
    CAPTURE(result.dump(2));
    CHECK(result.at("summary").at("verdict") == "error");
    CHECK_THAT(result.at("summary").at("evidence").get<std::string>(),
               opt_in.empty() ? Catch::Contains("runs no programs")
                              : Catch::Contains("no SUT scenario \"hostile\""));
    CHECK_FALSE(std::filesystem::exists(marker));
    (void)channel->send_message("shutdown");
    CHECK(agent.wait(10s).has_value());
  }
}

TEST_CASE("a peer that connects and never speaks is closed after the handshake timeout",
          "[integration][ofi][control]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "token", 2, "pingpong");
  RawClient silent(coordinator.port);
  REQUIRE(silent.read_message(2s));  // the challenge
  const auto started = std::chrono::steady_clock::now();
  CHECK(silent.closed_by_peer(10s));
  const auto waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
  CHECK(waited.count() > 4);  // the 5 s handshake timeout, measured from the challenge
  CHECK(waited.count() < 7);
  auto first = start_agent(coordinator.port, "token");
  auto second = start_agent(coordinator.port, "token");
  const auto code = coordinator.process->wait(60s);
  INFO(coordinator.process->err());
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK_THAT(coordinator.process->err(), Catch::Contains("within 5000 ms"));
}

TEST_CASE("past 64 connections in their handshake, more are closed at once",
          "[integration][ofi][control]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "token", 2, "pingpong");
  std::vector<std::unique_ptr<RawClient>> silent;
  for (int i = 0; i < 64; ++i) {
    silent.push_back(std::make_unique<RawClient>(coordinator.port));
    REQUIRE(silent.back()->read_message(5s));  // each got its challenge
  }
  RawClient one_too_many(coordinator.port);
  CHECK_FALSE(one_too_many.read_message(2s));  // closed without a challenge
  CHECK(coordinator.process->wait_for_output("64 connections are already authenticating", 5s));
  // An agent that comes while the slots are full is closed too, and tries again within its
  // connect budget instead of giving up (SECURITY.md).
  auto first = start_agent(coordinator.port, "token");
  REQUIRE(first->wait_for_output("closed the connection before the handshake; trying again", 5s));
  silent.clear();  // their threads end; agents get in again
  auto second = start_agent(coordinator.port, "token");
  const auto code = coordinator.process->wait(60s);
  INFO(coordinator.process->err().substr(0, 4000));
  REQUIRE(code.has_value());
  CHECK(*code == 0);
}

TEST_CASE("an agent that heartbeats but never runs its part is held to the step deadline",
          "[integration][ofi][control]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "token", 2, "--step-timeout 2 pingpong");
  auto joined = joined_raw_client(coordinator.port, "token");  // it answers nothing from here on
  RawClient& silent = *joined;
  auto agent = start_agent(coordinator.port, "token");
  std::atomic<bool> done{false};
  std::thread heartbeats([&] {
    for (uint64_t seq = 1; !done; ++seq) {
      (void)silent.read_message(1ms);  // reads, so it is not lost for not reading
      if (!silent.try_send_message({{"type", "heartbeat"}, {"seq", seq}, {"session", ""}})) return;
      std::this_thread::sleep_for(200ms);
    }
  });
  const auto started = std::chrono::steady_clock::now();
  const auto code = coordinator.process->wait(60s);
  const auto took = std::chrono::steady_clock::now() - started;
  done = true;
  heartbeats.join();
  INFO(coordinator.process->err());
  REQUIRE(code.has_value());
  const auto report = nlohmann::json::parse(read_text_file(dir.path() + "/report/report.json"));
  REQUIRE(report.at("scenarios").size() == 1);
  const auto& run = report.at("scenarios").at(0);
  CHECK(run.at("verdict") == "timeout");
  CHECK_THAT(run.at("observed").get<std::string>(),
             Catch::Contains("said nothing of its part within 2000 ms of its peer"));
  CHECK(took < 20s);  // the run's own deadline is 60 s
}

TEST_CASE("an agent that stops reading is lost within one deadline, and the run goes on",
          "[integration][ofi][slow][control]") {
  TempDir dir;
  // Scenarios whose run_scenario frames are large (a 900 kB title): a few fill the socket
  // buffers of a peer that reads nothing.
  std::string scenarios;
  for (int i = 0; i < 12; ++i) {
    const std::string id = "slow.reader-" + std::to_string(i);
    const nlohmann::json scenario = {
        {"id", id},
        {"title", std::string(900000, 'x')},
        {"tags", {"slow-reader"}},
        {"timeout_ms", 200},
        {"roles",
         {{"initiator", nlohmann::json::object()}, {"responder", nlohmann::json::object()}}},
        {"steps", {{{"op", "create_endpoint"}}}}};
    const std::string file = dir.path() + "/" + id + ".json";
    std::ofstream(file) << scenario.dump();
    scenarios += " " + file;
  }
  auto coordinator = start_coordinator(dir, "token", 2, scenarios);
  auto joined = joined_raw_client(coordinator.port, "token", 4096);  // it reads nothing from here
  RawClient& slow = *joined;
  auto agent = start_agent(coordinator.port, "token");
  // Heartbeats keep it from being lost for silence: only its not reading can lose it.
  std::atomic<bool> done{false};
  std::thread heartbeats([&] {
    for (uint64_t seq = 1; !done; ++seq) {
      if (!slow.try_send_message({{"type", "heartbeat"}, {"seq", seq}, {"session", ""}})) return;
      std::this_thread::sleep_for(500ms);
    }
  });
  const auto code = coordinator.process->wait(90s);
  done = true;
  heartbeats.join();
  const std::string log = coordinator.process->err();
  INFO(log);
  REQUIRE(code.has_value());
  CHECK(*code == 3);
  CHECK_THAT(log, Catch::Contains("stopped reading"));
  const auto report = nlohmann::json::parse(read_text_file(dir.path() + "/report/report.json"));
  CHECK(report.at("scenarios").size() == 12);  // every scenario has its verdict
  for (const auto& run : report.at("scenarios")) CHECK(run.at("verdict") != "pass");
}

TEST_CASE(
    "1000 connections with wrong tokens are refused, the coordinator stays responsive "
    "and its memory flat",
    "[integration][ofi][slow][control]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "token", 2, "pingpong");
  auto attempt = [&] {
    RawClient intruder(coordinator.port);
    const auto challenge = intruder.read_message(5s);
    REQUIRE(challenge);
    intruder.send_message(auth_for(*challenge, "wrong-token"));
    const auto answer = intruder.read_message(5s);
    REQUIRE(answer);
    REQUIRE(answer->at("type") == "reject");
  };
  for (int i = 0; i < 100; ++i) attempt();  // the allocator's arenas and caches settle
  const long before = resident_kib(coordinator.process->pid());
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 900; ++i) attempt();
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const long after = resident_kib(coordinator.process->pid());
  CAPTURE(before, after, seconds);
  // Sanitizers hold freed memory back (ASan's quarantine), so only a plain build measures it.
  if (!faultline::testing::kSanitizedBuild) CHECK(after - before < 4096);  // KiB
  // Responsive: a challenge within a second, then two real agents run the suite.
  RawClient next(coordinator.port);
  CHECK(next.read_message(1s));
  auto first = start_agent(coordinator.port, "token");
  auto second = start_agent(coordinator.port, "token");
  const auto code = coordinator.process->wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
}

TEST_CASE("a frame nested 400000 levels deep loses its agent, not the coordinator",
          "[integration][ofi][control]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "token", 2, "pingpong");
  auto joined = joined_raw_client(coordinator.port, "token");
  RawClient& deep = *joined;
  deep.send_frame(R"({"type":"heartbeat","seq":1,"session":"","x":)" + std::string(400000, '[') +
                  std::string(400000, ']') + "}");
  CHECK(deep.closed_by_peer());
  CHECK(coordinator.process->wait_for_output("nests 400001 levels deep", 5s));
  CHECK_FALSE(coordinator.process->wait(100ms).has_value());  // still running
}

TEST_CASE("agents that run starts read the token from a pipe, never from their environment",
          "[integration][ofi][control]") {
  TempDir dir;
  BackgroundProcess run("exec " + kFaultline + " run pingpong --report-dir " + dir.path() +
                        "/report");
  std::set<pid_t> agents;
  for (int i = 0; i < 2000 && agents.size() < 2; ++i) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string stat = read_text_file(entry.path().string() + "/stat");
      const auto close = stat.rfind(')');
      if (close == std::string::npos || std::atoi(stat.c_str() + close + 4) != run.pid()) continue;
      const std::string command_line = read_text_file(entry.path().string() + "/cmdline");
      if (command_line.find("agent") == std::string::npos) continue;  // not exec'd yet
      agents.insert(std::atoi(entry.path().filename().c_str()));
      CAPTURE(command_line);
      CHECK(command_line.find("/proc/self/fd/3") != std::string::npos);
      CHECK(read_text_file(entry.path().string() + "/environ").find("FAULTLINE_TOKEN") ==
            std::string::npos);
    }
    std::this_thread::sleep_for(1ms);
  }
  CHECK(agents.size() == 2);
  const auto code = run.wait(60s);
  INFO(run.err());
  REQUIRE(code.has_value());
  CHECK(*code == 0);
}

TEST_CASE("the token appears in no log, report or command line",
          "[integration][ofi][slow][control]") {
  TempDir dir;
  const std::string token = "c0ffee-secret-token-7d1e";
  // test.sleep first: the processes are still there when their command lines are read.
  auto coordinator =
      start_coordinator(dir, token, 2, "test.sleep pingpong completion-error.write-every-status");
  auto first = start_agent(coordinator.port, token);
  auto second = start_agent(coordinator.port, token);
  // Joined: each has gone from the test's shell (whose command line holds the token) to
  // faultline.
  REQUIRE(coordinator.process->wait_for_output("agent-2 joined", 20s));
  RawClient intruder(coordinator.port);  // a wrong token, logged as refused
  const auto challenge = intruder.read_message(5s);
  REQUIRE(challenge);
  intruder.send_message(auth_for(*challenge, token + "-wrong"));
  for (pid_t pid : {coordinator.process->pid(), first->pid(), second->pid()}) {
    const std::string command_line = read_text_file("/proc/" + std::to_string(pid) + "/cmdline");
    CHECK_FALSE(command_line.empty());
    CHECK(command_line.find(token) == std::string::npos);
    // Each was started with FAULTLINE_TOKEN, and wiped it from the environment it was given.
    const std::string environment = read_text_file("/proc/" + std::to_string(pid) + "/environ");
    CHECK_FALSE(environment.empty());
    CHECK(environment.find(token) == std::string::npos);
  }
  // Nor in the environment of the agents' scenario children (test.sleep is running), even one
  // caught between its fork and its exec.
  size_t children = 0;
  for (int i = 0; i < 1000 && children == 0; ++i) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string stat = read_text_file(entry.path().string() + "/stat");
      const auto close = stat.rfind(')');
      if (close == std::string::npos) continue;
      const pid_t parent = std::atoi(stat.c_str() + close + 4);  // ") S PPID"
      if (parent != first->pid() && parent != second->pid()) continue;
      ++children;
      CAPTURE(entry.path());
      CHECK(read_text_file(entry.path().string() + "/environ").find(token) == std::string::npos);
    }
    if (children == 0) std::this_thread::sleep_for(10ms);
  }
  CHECK(children >= 1);
  const auto code = coordinator.process->wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  first->wait(10s);
  second->wait(10s);
  for (const auto* process : {coordinator.process.get(), first.get(), second.get()}) {
    CHECK(process->err().find(token) == std::string::npos);
    CHECK(process->out().find(token) == std::string::npos);
  }
  size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path() + "/report")) {
    if (!entry.is_regular_file()) continue;
    ++files;
    CAPTURE(entry.path());
    CHECK(read_text_file(entry.path()).find(token) == std::string::npos);
  }
  CHECK(files >= 3);
}

TEST_CASE("the metrics endpoint is read-only: it answers GET /metrics and nothing else",
          "[integration][control]") {
  // An agent serves its metrics while it is still trying to reach a coordinator.
  const int port = free_port();
  BackgroundProcess agent("FAULTLINE_TOKEN=t exec " + kFaultline +
                          " agent --coordinator 127.0.0.1:" + std::to_string(free_port()) +
                          " --connect-timeout 30 --metrics-port " + std::to_string(port));
  const std::string request =
      "/usr/bin/python3 -c 'import http.client, sys\n"
      "c = http.client.HTTPConnection(\"127.0.0.1\", int(sys.argv[1]), timeout=5)\n"
      "c.request(sys.argv[2], sys.argv[3], body=sys.argv[4] or None)\n"
      "r = c.getresponse(); print(r.status); print(r.read().decode(errors=\"replace\"))' " +
      std::to_string(port) + " ";
  auto status_of = [&](const std::string& method, const std::string& path,
                       const std::string& body = "") {
    const auto answer = run_command(request + method + " '" + path + "' '" + body + "'");
    return answer.exit_code == 0 ? std::stoi(answer.out) : -1;
  };
  int ready = -1;
  for (int i = 0; i < 50 && ready != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ready = status_of("GET", "/metrics");
  }
  REQUIRE(ready == 200);
  for (const std::string method : {"POST", "PUT", "DELETE", "PATCH"}) {
    CAPTURE(method);
    const int status = status_of(method, "/metrics", "faultline_agent_up 5");
    CHECK(status >= 400);
  }
  for (const std::string path : {"/", "/etc/passwd", "/../../../../etc/passwd", "/metrics/../x"}) {
    CAPTURE(path);
    CHECK(status_of("GET", path) == 404);
  }
  const std::string after = run_command(request + "GET /metrics ''").out;
  CHECK_THAT(after, Catch::Contains("exposer_transferred_bytes_total"));  // still serving
  CHECK(after.find("faultline_agent_up 5") == std::string::npos);
}

TEST_CASE("a scenario_result the report cannot hold loses its agent, not the coordinator",
          "[integration][ofi][control]") {
  // A details that is a string, a traffic that is not an object, a verdict nobody knows: each
  // once ended the coordinator with a type_error or broke report.json's schema.
  for (const nlohmann::json& bad :
       {nlohmann::json{{"verdict", "pass"}, {"details", "a string"}},
        nlohmann::json{{"verdict", "pass"}, {"details", {{"traffic", 7}}}},
        nlohmann::json{{"verdict", "splendid"}}}) {
    CAPTURE(bad.dump());
    TempDir dir;
    auto coordinator = start_coordinator(dir, "token", 2, "pingpong");
    RawAgent raw(coordinator.port);
    REQUIRE(raw.answer().at("type") == "welcome");
    auto real = start_agent(coordinator.port, "token");
    const auto run = raw.await("run_scenario");
    nlohmann::json result = bad;
    result["type"] = "scenario_result";
    result["run_id"] = run.at("run_id");
    raw.send(result);
    CHECK(raw.client.closed_by_peer());
    const auto code = coordinator.process->wait(30s);
    INFO(coordinator.process->err());
    REQUIRE(code.has_value());
    CHECK(*code == 3);  // an agent lost is a harness error, not a crash (which was a type_error)
    CHECK_THAT(coordinator.process->err(),
               Catch::Contains("sent a scenario_result the report cannot hold: /"));
    auto report = faultline::harness::read_report(dir.path() + "/report/report.json");
    REQUIRE(report.ok());  // it conforms: read_report checks the schema
    CHECK(report->at("scenarios").at(0).at("verdict") == "error");
  }
}

TEST_CASE("a hello the report cannot hold is refused at the handshake, naming the field",
          "[integration][ofi][control]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "token", 2, "pingpong");
  for (const nlohmann::json& hello :
       {nlohmann::json{{"host", "h"}, {"pid", 1}, {"target", 5}},
        nlohmann::json{{"host", "h"}, {"pid", 1}, {"devices", {{{"name", 3}}}}},
        nlohmann::json{{"host", "h"}, {"pid", 1}, {"name", "a name\nwith lines"}},
        nlohmann::json{{"host", "h"}, {"pid", 1}, {"name", 7}},
        nlohmann::json{{"host", "h"}, {"pid", 1}, {"rail", std::string(65, 'r')}}}) {
    CAPTURE(hello.dump());
    RawAgent raw(coordinator.port, hello);
    const auto answer = raw.answer();
    CHECK(answer.at("type") == "reject");
    CHECK_THAT(answer.at("reason").get<std::string>(),
               Catch::Contains("the hello breaks the report's agent record: /"));
    CHECK(raw.client.closed_by_peer());
  }
  // The places stay free: two real agents still run the scenario, and the report conforms.
  auto first = start_agent(coordinator.port, "token");
  auto second = start_agent(coordinator.port, "token");
  const auto code = coordinator.process->wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK(faultline::harness::read_report(dir.path() + "/report/report.json").ok());
}

TEST_CASE("a scrape is answered within a second with 16 idle connections open",
          "[integration][control]") {
  const int port = free_port();
  BackgroundProcess agent("FAULTLINE_TOKEN=t exec " + kFaultline +
                          " agent --coordinator 127.0.0.1:" + std::to_string(free_port()) +
                          " --connect-timeout 30 --metrics-port " + std::to_string(port));
  const std::string scrape =
      "/usr/bin/python3 -c 'import http.client, sys, time\n"
      "t = time.monotonic()\n"
      "c = http.client.HTTPConnection(\"127.0.0.1\", int(sys.argv[1]), timeout=10)\n"
      "c.request(\"GET\", \"/metrics\"); r = c.getresponse(); r.read()\n"
      "print(r.status, round(time.monotonic() - t, 3))' " +
      std::to_string(port);
  std::string ready;
  for (int i = 0; i < 50 && ready.rfind("200", 0) != 0; ++i) {
    std::this_thread::sleep_for(100ms);
    ready = run_command(scrape).out;
  }
  REQUIRE(ready.rfind("200", 0) == 0);
  // Sixteen connections that never send a request (a scanner, a stuck client).
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 16; ++i) idle.push_back(std::make_unique<RawClient>(port));
  std::this_thread::sleep_for(200ms);
  const auto answer = run_command(scrape);
  INFO(answer.out << answer.err);
  REQUIRE(answer.exit_code == 0);
  CHECK(answer.out.rfind("200 ", 0) == 0);
  CHECK(std::stod(answer.out.substr(4)) < 1.0);
}

TEST_CASE("a coordinator whose agents never join (a wrong token) writes a report saying why",
          "[integration][ofi][control]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "token", 2, "pingpong --wait 3");
  auto refused = start_agent(coordinator.port, "another-token");
  const auto code = coordinator.process->wait(30s);
  REQUIRE(code.has_value());
  CHECK(*code == 3);
  auto report = faultline::harness::read_report(dir.path() + "/report/report.json");
  REQUIRE(report.ok());  // written, and conforming
  CHECK(report->at("run").at("complete") == false);
  CHECK_THAT(report->at("run").at("not_run").get<std::string>(),
             Catch::Contains("only 0 of 2 agents connected within 3 s"));
  CHECK_THAT(read_text_file(dir.path() + "/report/junit.xml"),
             Catch::Contains("nothing ran: ") && Catch::Contains("<error type=\"incomplete\""));
  CHECK_THAT(read_text_file(dir.path() + "/report/summary.md"), Catch::Contains("nothing ran: "));
}
