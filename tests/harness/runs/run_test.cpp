// `faultline run`, the default job, as a user runs it: real agent processes on 127.0.0.1.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "../harness_test_paths.hpp"
#include "support/background_process.hpp"
#include "support/run_command.hpp"

using faultline::testing::run_command;
using faultline::testing::TempDir;

TEST_CASE("run with no arguments passes and writes faultline-report/report.json",
          "[integration][ofi]") {
  TempDir dir;
  auto result = run_command("cd " + dir.path() + " && " + kFaultline + " run");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.out, Catch::Contains("pingpong"));
  CHECK_THAT(result.out, Catch::Contains("3 scenario runs: 3 pass"));
  const auto report = report_in(dir.path() + "/faultline-report");
  CHECK(report.at("run").at("transport") == "ofi");
  CHECK(report.at("run").at("provider") == "tcp");
  CHECK(report.at("run").at("complete") == true);
  CHECK(report.at("run").at("agents").size() == 2);
  REQUIRE(report.at("scenarios").size() == 3);
  for (const auto& scenario : report.at("scenarios")) {
    CHECK(scenario.at("verdict") == "pass");
    // Both agents really ran it: each reported its own side.
    CHECK(scenario.at("sides").size() == 2);
  }
}

TEST_CASE("run over shm passes", "[integration][ofi]") {
  TempDir dir;
  auto result =
      run_command(kFaultline + " run --provider shm --report-dir " + dir.path() + "/report");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const auto report = report_in(dir.path() + "/report");
  CHECK(report.at("run").at("provider") == "shm");
  CHECK(report.at("scenarios")[0].at("verdict") == "pass");
}

TEST_CASE("run with 8 agents covers the 28 pairs once each in 7 rounds",
          "[integration][ofi][slow]") {
  TempDir dir;
  auto result = run_command(kFaultline + " run pingpong --agents 8 --report-dir " + dir.path());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const auto report = report_in(dir.path());
  const auto& runs = report.at("scenarios");
  REQUIRE(runs.size() == 28);
  std::set<std::pair<std::string, std::string>> pairs;
  std::map<size_t, std::set<std::string>> busy_by_round;
  for (const auto& run : runs) {
    CHECK(run.at("verdict") == "pass");
    std::string a = run.at("agents").at("initiator");
    std::string b = run.at("agents").at("responder");
    CHECK(busy_by_round[run.at("round")].insert(a).second);
    CHECK(busy_by_round[run.at("round")].insert(b).second);
    pairs.insert(std::minmax(a, b));
  }
  CHECK(pairs.size() == 28);
  CHECK(busy_by_round.size() == 7);
}

TEST_CASE("a scenario that aborts or segfaults is crashed with its signal, and the next one runs",
          "[integration][ofi]") {
  TempDir dir;
  auto result = run_command("FAULTLINE_ENABLE_TEST_SCENARIOS=1 " + kFaultline +
                            " run test.abort test.segfault pingpong --report-dir " + dir.path());
  INFO(result.out << result.err);
  CHECK(result.exit_code == 1);
  const auto runs = report_in(dir.path()).at("scenarios");
  REQUIRE(runs.size() == 3);
  CHECK(runs[0].at("id") == "test.abort");
  CHECK(runs[0].at("verdict") == "crashed");
  CHECK_THAT(runs[0].at("observed").get<std::string>(), Catch::Contains("SIGABRT"));
  CHECK_THAT(runs[0].at("evidence").get<std::string>(), Catch::Contains("abort"));
  CHECK(runs[1].at("verdict") == "crashed");
  CHECK_THAT(runs[1].at("observed").get<std::string>(), Catch::Contains("SIGSEGV"));
  CHECK_THAT(runs[1].at("evidence").get<std::string>(), Catch::Contains("null pointer"));
  CHECK(runs[2].at("id") == "pingpong");
  CHECK(runs[2].at("verdict") == "pass");
}

TEST_CASE("the built-in pingpong reports each side's traffic: bytes and latency",
          "[integration][ofi]") {
  TempDir dir;
  auto result = run_command(kFaultline + " run pingpong --report-dir " + dir.path());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const auto run = report_in(dir.path()).at("scenarios").at(0);
  REQUIRE(run.at("sides").size() == 2);
  // 1 B to 1 MiB each way, and the initiator's 1 MiB RDMA write.
  constexpr uint64_t kEachWay = 1 + 64 + 4096 + 65536 + (1 << 20);
  for (const auto& [agent, side] : run.at("sides").items()) {
    CAPTURE(agent, side.dump());
    const auto& details = side.at("details");
    const auto& traffic = details.at("traffic");
    const bool initiator = details.at("role") == "initiator";
    CHECK(traffic.at("bytes").at("sent").get<uint64_t>() >=
          kEachWay + (initiator ? uint64_t{1} << 20 : 0));
    CHECK(traffic.at("bytes").at("received").get<uint64_t>() >= kEachWay);
    CHECK(traffic.at("latency").at("SEND").at("count").get<uint64_t>() >= 5);
    CHECK(traffic.at("latency").at("SEND").at("sum_seconds").get<double>() > 0);
  }
}

TEST_CASE("a step that hangs past --step-timeout is a timeout naming the step",
          "[integration][ofi]") {
  TempDir dir;
  auto result = run_command("FAULTLINE_ENABLE_TEST_SCENARIOS=1 " + kFaultline +
                            " run test.sleep --step-timeout 1 --report-dir " + dir.path());
  INFO(result.out << result.err);
  CHECK(result.exit_code == 1);
  const auto run = report_in(dir.path()).at("scenarios").at(0);
  CHECK(run.at("verdict") == "timeout");
  CHECK_THAT(run.at("observed").get<std::string>(),
             Catch::Contains("more than 1000 ms in one step"));
  CHECK_THAT(run.at("evidence").get<std::string>(), Catch::Contains("sleep 10000 ms"));
  CHECK(run.at("duration_ms").get<double>() < 5000);
}

TEST_CASE("run refuses bad arguments with exit 2 and says why", "[integration]") {
  auto unknown = run_command(kFaultline + " run nosuch");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("no scenario matches \"nosuch\""));
  CHECK_THAT(unknown.err, Catch::Contains("faultline list shows all"));
  CHECK(unknown.err.size() < 400);  // not every id of the catalog on one line
  auto typo = run_command(kFaultline + " run tagged.eager-boundry");
  CHECK(typo.exit_code == 2);
  CHECK_THAT(typo.err, Catch::Contains("did you mean tagged.eager-boundary"));
  auto command = run_command(kFaultline + " rnu");
  CHECK(command.exit_code == 2);
  CHECK_THAT(command.err, Catch::Contains("unknown command 'rnu'; did you mean run?"));
  auto suite = run_command(kFaultline + " run --suite nosuch");
  CHECK(suite.exit_code == 2);
  CHECK_THAT(
      suite.err,
      Catch::Contains(
          "expected a suite (conformance, faults, limits, links, pingmesh, protocols, smoke)"));
  // "Did you mean" at every depth: a subcommand's subcommand, an option, a suite.
  const std::vector<std::pair<std::string, std::string>> typos = {
      {" bench pingpnog", "faultline bench: unknown command 'pingpnog'; did you mean pingpong?"},
      {" sut exce", "faultline sut: unknown command 'exce'; did you mean exec?"},
      {" run --agent 4", "faultline run: unknown option '--agent'; did you mean --agents?"},
      {" bench pingpong --sizs 8", "unknown option '--sizs'; did you mean --sizes?"},
      {" run --suite fualts", "got \"fualts\"; did you mean faults?"}};
  for (const auto& [line, words] : typos) {
    auto mistyped = run_command(kFaultline + line);
    INFO(line << "\n" << mistyped.err);
    CHECK(mistyped.exit_code == 2);
    CHECK_THAT(mistyped.err, Catch::Contains(words));
  }
  // Where nothing is close, no guess.
  CHECK_THAT(run_command(kFaultline + " run --zzzzzzzz").err,
             Catch::Contains("unknown option '--zzzzzzzz' (faultline run --help lists them)"));
  // Verbs on a host without an RDMA device: said before any agent starts.
  if (!std::filesystem::exists("/sys/class/infiniband") ||
      std::filesystem::is_empty("/sys/class/infiniband")) {
    auto verbs = run_command(kFaultline + " run pingpong --transport verbs");
    CHECK(verbs.exit_code == 2);
    CHECK_THAT(verbs.err,
               Catch::Contains("faultline run: not_found: no verbs devices on this host") &&
                   Catch::Contains("--transport ofi") && !Catch::Contains("joined"));
  }
  // A report directory that cannot be made: before any agent starts, naming the option.
  for (const std::string subcommand : {"run pingpong", "coordinator", "sut sweep", "diagnose"}) {
    auto unmade =
        run_command(kFaultline + " " + subcommand + " --report-dir /proc/faultline/report");
    INFO(subcommand << "\n" << unmade.err);
    CHECK(unmade.exit_code == 2);
    CHECK_THAT(unmade.err,
               Catch::Contains("faultline " + subcommand.substr(0, subcommand.find(" pingpong")) +
                               ": --report-dir: cannot create /proc/faultline/report") &&
                   !Catch::Contains("joined"));
  }
  auto seed = run_command(kFaultline + " run --seed -1");
  CHECK(seed.exit_code == 2);  // once taken as 2^64 - 1
  CHECK_THAT(seed.err, Catch::Contains("--seed") && Catch::Contains("got '-1'"));
  for (const char* seconds : {"0", "nan", "1e300"}) {
    auto timeout = run_command(kFaultline + " run --step-timeout " + seconds);
    INFO(seconds << ": " << timeout.err);
    CHECK(timeout.exit_code == 2);
    CHECK_THAT(timeout.err, Catch::Contains("expected seconds above 0 and at most 86400"));
  }
  for (const char* url :
       {"localhost:9091", "http://:9091", "http://h:0", "ftp://h:21", "http://h:9091/?x=1"}) {
    // Refused when read, not after the whole run (http://pushgateway, port 80, is taken).
    auto push = run_command(kFaultline + " run --pushgateway '" + url + "'");
    INFO(url << ": " << push.err);
    CHECK(push.exit_code == 2);
    CHECK_THAT(push.err, Catch::Contains("expected http://HOST[:PORT][/PATH]"));
  }
  auto agents = run_command(kFaultline + " run --agents 1");
  CHECK(agents.exit_code == 2);
  auto provider = run_command(kFaultline + " run --provider nosuch");
  CHECK(provider.exit_code == 2);
  CHECK_THAT(provider.err, Catch::Contains("unknown provider 'nosuch'"));
}
