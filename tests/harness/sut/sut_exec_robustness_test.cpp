// faultline sut exec against what ordinary programs print and what users give it: bytes that
// are not UTF-8, very long lines, millions of lines, a pattern that does not compile, Ctrl-C,
// a program that signals its own group, many processes to take stacks of, large and malformed
// plans, two runs in one folder.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/background_process.hpp"
#include "support/run_command.hpp"
#include "sut_runs.hpp"

using faultline::testing::BackgroundProcess;
using faultline::testing::run_command;
using faultline::testing::SutRun;
using faultline::testing::TempDir;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

SutRun exec_in(const TempDir& dir, const std::string& arguments) {
  return faultline::testing::sut_exec(dir.path(), arguments);
}

const std::string kBinary = FAULTLINE_BINARY;

}  // namespace

TEST_CASE("sut exec: output that is not UTF-8 is kept, each bad byte replaced", "[integration]") {
  TempDir dir;
  const SutRun run = exec_in(dir, "-- printf 'ok \\377\\n'");
  CHECK(run.command.exit_code == 0);
  REQUIRE(run.report.at("output").size() == 1);
  CHECK(run.report.at("output").at(0) == "ok \xEF\xBF\xBD");
}

TEST_CASE(
    "sut exec: a checker pattern is RE2's, refused before the program runs, linear on "
    "a long line",
    "[integration]") {
  TempDir dir;
  const std::string marker = dir.path() + "/ran";
  const auto refused = run_command(kBinary + " sut exec --error '(' --report-dir " + dir.path() +
                                   "/r -- touch " + marker);
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("--error '(' is not a regular expression RE2 takes"));
  CHECK_FALSE(std::filesystem::exists(marker));
  // std::regex recursed once per character here: 100 KB of 'a' crashed it.
  const SutRun run = exec_in(dir, "--wrong '.*x' -- python3 -c \"print('a' * 100000)\"");
  CHECK(run.command.exit_code == 0);
  CHECK(run.report.at("verdict") == "pass");
}

TEST_CASE("sut exec: two million lines cost bounded memory, the report keeps the first and last",
          "[integration]") {
  TempDir dir;
  const SutRun run = exec_in(
      dir, "-- python3 -c \"import sys; sys.stdout.write('line\\\\n' * 2000000 + 'end\\\\n')\"");
  CHECK(run.command.exit_code == 0);
  CHECK(run.report.at("output").size() == 1000);
  CHECK(run.report.at("output").back() == "end");
  CHECK(run.report.at("output_dropped_lines") == 2000001 - 1000);
  CHECK(std::filesystem::file_size(dir.path() + "/output.log") == 2000000 * 5 + 4);
  CHECK(std::filesystem::file_size(dir.path() + "/sut.json") < 100000);
}

TEST_CASE("sut exec: a 40 MB line is read in linear time and cut in the report", "[integration]") {
  TempDir dir;
  // Quadratic splitting took 18 s for this; the deadline is 8.
  const SutRun run = sut_exec(
      dir, "--deadline 8 -- python3 -c \"import sys; sys.stdout.write('a' * 40000000 + '\\\\n')\"");
  CHECK(run.report.at("verdict") == "pass");
  CHECK(run.report.at("output_cut_lines") == 1);
  CHECK_THAT(run.report.at("output").at(0).get<std::string>(),
             Catch::EndsWith("bytes cut: the log has the line]"));
}

TEST_CASE(
    "sut exec: Ctrl-C or a closed terminal ends the program with its report, and its own "
    "group's SIGSTOP does not stop faultline",
    "[integration]") {
  for (int signal : {SIGINT, SIGHUP}) {
    TempDir dir;
    BackgroundProcess exec("exec " + kBinary + " sut exec --report-dir " + dir.path() +
                           " -- sh -c 'sleep 301 & sleep 301'");
    std::this_thread::sleep_for(500ms);
    kill(exec.pid(), signal);
    const auto code = exec.wait(30s);
    REQUIRE(code.has_value());
    CHECK(*code == 1);
    const json report = json::parse(std::ifstream(dir.path() + "/sut.json"));
    CHECK(report.at("verdict") == "hang");
    CHECK(report.at("stopped") == true);
    CHECK(run_command("pgrep -f '[s]leep 301'").out.empty());  // nothing it started is left
  }
  TempDir dir;
  const auto started = std::chrono::steady_clock::now();
  const SutRun stopped = exec_in(dir, "--deadline 2 -- sh -c 'kill -STOP 0; echo resumed'");
  CHECK(stopped.report.at("verdict") == "hang");
  CHECK(std::chrono::steady_clock::now() - started < 30s);
}

TEST_CASE("sut exec: the stacks of many processes are taken in parallel", "[integration][slow]") {
  TempDir dir;
  const auto started = std::chrono::steady_clock::now();
  const SutRun run =
      exec_in(dir, "--deadline 1 -- sh -c 'for i in $(seq 24); do sleep 300 & done; wait'");
  const auto took = std::chrono::steady_clock::now() - started;
  CHECK(run.report.at("verdict") == "hang");
  const std::string stacks = run.report.at("stacks");
  size_t taken = 0;
  for (size_t at = stacks.find("=== pid"); at != std::string::npos;
       at = stacks.find("=== pid", at + 1))
    ++taken;
  CHECK(taken == 25);
  // One gdb at a time took about 0.4 s each here, more under load; the budget caps it at 20 s.
  CHECK(took < 25s);
}

TEST_CASE("sut exec: a plan of 10,000 faults reaches the program, and a malformed plan is refused",
          "[integration]") {
  TempDir dir;
  json faults = json::array();
  for (int i = 0; i < 10000; ++i)
    faults.push_back({{"kind", "rewrite_status"}, {"status", "REM_ACCESS_ERR"}, {"nth", i + 1}});
  std::ofstream(dir.path() + "/large.json") << json{{"seed", 7}, {"faults", faults}}.dump();
  const SutRun large = exec_in(dir, "--plan " + dir.path() + "/large.json -- fi_info -p tcp");
  // fi_info posts nothing: no fault fires, but the program ran (no E2BIG) and the seed stayed.
  CHECK(large.report.at("verdict") == "not-reached");
  CHECK(large.report.at("plan").at("seed") == 7);
  CHECK(large.report.at("plan").at("faults").size() == 10000);
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {R"({"faults": [], "faults": []})", "/faults: expected each key once"},
           {"{\"faults\": [" + std::string(100000, '[') + std::string(100000, ']') + "]}",
            "bad.json: expected at most 64 levels of nesting"},
           {R"({"faults": null})", "expected {\"faults\": [...]}"}}) {
    std::ofstream(dir.path() + "/bad.json") << text;
    const auto refused = run_command(kBinary + " sut exec --plan " + dir.path() +
                                     "/bad.json --report-dir " + dir.path() + "/r -- true");
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains(expected));
  }
  // A compact --fault with bytes that are not UTF-8 is refused like any other (fuzzing found
  // it crashing the error message).
  const auto bytes = run_command(kBinary + " sut exec --fault \"$(printf 'status=\\377')\" " +
                                 "--report-dir " + dir.path() + "/r -- true");
  CHECK(bytes.exit_code == 2);
  CHECK_THAT(bytes.err, Catch::Contains("an error status name"));
  const auto folder = run_command(kBinary + " sut exec --plan " + dir.path() + " --report-dir " +
                                  dir.path() + "/r -- true");
  CHECK(folder.exit_code == 2);
  CHECK_THAT(folder.err, Catch::Contains(": a folder, not a file"));
}

TEST_CASE("sut exec: a second run into a folder in use is refused before its program runs",
          "[integration]") {
  TempDir dir;
  BackgroundProcess first("exec " + kBinary + " sut exec --report-dir " + dir.path() +
                          " -- sleep 5");
  std::this_thread::sleep_for(300ms);
  const auto second = run_command(kBinary + " sut exec --report-dir " + dir.path() + " -- touch " +
                                  dir.path() + "/second-ran");
  CHECK(second.exit_code == 2);
  CHECK_THAT(second.err, Catch::Contains("in use by another faultline run"));
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/second-ran"));
  kill(first.pid(), SIGTERM);
  first.wait(30s);
}

TEST_CASE("sut exec: a hang whose stacks gdb cannot take still says where each thread waits",
          "[integration]") {
  TempDir dir;
  // No gdb (nor timeout) on the PATH: what a loaded host's gdb running out of time leaves too.
  const auto run =
      run_command("PATH=/nonexistent " + std::string(FAULTLINE_BINARY) + " sut exec --report-dir " +
                  dir.path() + " --deadline 1 -- /bin/sleep 60");
  const json report = json::parse(faultline::testing::read_text_file(dir.path() + "/sut.json"));
  INFO(run.out << run.err << report.dump(2));
  CHECK(report.at("verdict") == "hang");
  const std::string stacks = report.at("stacks");
  CHECK_THAT(stacks, Catch::Contains("(innermost frames from /proc, gdb gave none)") &&
                         Catch::Contains("\"sleep\":\n#0  ") &&
                         Catch::Contains("(in system call "));
}

TEST_CASE("sut exec: the checker sees a 3 MB progress line whole, its result at the end",
          "[integration]") {
  // Cut at 16 KiB for the checker, such a line hid its result: --ok failed, --wrong passed.
  const std::string progress =
      "-- python3 -c \"import sys; sys.stdout.write('.' * 3000000 + ' RESULT\\\\n')\"";
  TempDir ok_dir;
  const SutRun ok = exec_in(ok_dir, "--ok 'RESULT$' " + progress);
  CHECK(ok.report.at("verdict") == "pass");
  TempDir wrong_dir;
  const SutRun wrong = exec_in(wrong_dir, "--wrong 'RESULT' " + progress);
  CHECK(wrong.report.at("verdict") == "silent-corruption");
  // The report keeps its first 16 KiB.
  CHECK_THAT(wrong.report.at("output").at(0).get<std::string>(),
             Catch::EndsWith("bytes cut: the log has the line]"));
}

TEST_CASE("sut exec: a program path or argument that is not UTF-8 keeps its report",
          "[integration]") {
  TempDir dir;
  const std::string program = dir.path() + "/prog\xFF";
  std::ofstream(program) << "#!/bin/sh\necho ran \"$1\"\n";
  std::filesystem::permissions(program, std::filesystem::perms::owner_all);
  const auto run = run_command(kBinary + " sut exec --report-dir " + dir.path() + "/r -- '" +
                               program + "' 'arg\xFE'");
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  const json report = json::parse(std::ifstream(dir.path() + "/r/sut.json"));
  CHECK(report.at("verdict") == "pass");
  CHECK(report.at("command") == json::array({dir.path() + "/prog\\xff", "arg\\xfe"}));
}

TEST_CASE("sut exec: shm regions a killed program left under its pid are removed",
          "[integration]") {
  // libfabric's shm provider names its regions /dev/shm/PID:..., and a later process given
  // that pid cannot make its own (fi_enable: EBUSY). A program killed at its deadline cannot
  // remove them: faultline does, before the pid can be given again.
  TempDir dir;
  const std::string mark = "faultline-test-" + std::to_string(getpid());
  const SutRun run =
      exec_in(dir, "--deadline 1 -- sh -c 'touch /dev/shm/$$:" + mark + " && sleep 30 & wait'");
  CHECK(run.report.at("verdict") == "hang");
  const auto left = run_command("ls /dev/shm | grep -c " + mark);
  CHECK(left.out == "0\n");
}
