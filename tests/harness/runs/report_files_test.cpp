// The report files of real runs: report.json conforms to its schema, junit.xml is read back
// by a JUnit consumer (junitparser) with the right counts, summary.md explains what did not
// pass, `faultline report` reproduces both, and a run killed with SIGKILL leaves a report
// that parses, conforms and holds what finished.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../harness_test_paths.hpp"
#include "faultline/harness/runs/report_reader.hpp"
#include "faultline/reports/directory_lock.hpp"
#include "support/background_process.hpp"
#include "support/run_command.hpp"

using faultline::testing::BackgroundProcess;
using faultline::testing::read_text_file;
using faultline::testing::run_command;
using faultline::testing::TempDir;
using nlohmann::json;

namespace {

const std::string kJunitReader = FAULTLINE_JUNIT_READER;

void require_conforms(const json& report) {
  const auto problems = faultline::harness::report_schema_problems(report);
  std::string text;
  for (const auto& problem : problems) text += problem + "\n";
  INFO(text);
  REQUIRE(problems.empty());
}

}  // namespace

TEST_CASE("a run's report.json, junit.xml and summary.md agree and conform", "[integration][ofi]") {
  TempDir dir;
  // One pass, one fail (a deliberately wrong expectation), one skip (verbs only).
  auto result =
      run_command(kFaultline + " run " + kData + "/wrong-expectation.json " + kData +
                  "/verbs-only.json inline.workload-inline-on --report-dir " + dir.path());
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 1);
  const json report = json::parse(read_text_file(dir.path() + "/report.json"));
  require_conforms(report);
  CHECK(report.at("run").at("complete") == true);
  CHECK(report.at("summary").at("verdicts") == json({{"fail", 1}, {"pass", 1}, {"skip", 1}}));
  // Every agent's devices and their limits are in the report.
  for (const auto& agent : report.at("run").at("agents")) {
    REQUIRE_FALSE(agent.at("devices").empty());
    CHECK(agent.at("devices").at(0).at("limits").contains("max_qp_wr"));
  }

  auto read = run_command("/usr/bin/python3 " + kJunitReader + " " + dir.path() + "/junit.xml");
  INFO(read.out << read.err);
  REQUIRE(read.exit_code == 0);
  const json junit = json::parse(read.out);
  REQUIRE(junit.at("suites").size() == 1);
  const json& suite = junit.at("suites").at(0);
  CHECK(suite.at("tests") == 3);
  CHECK(suite.at("failures") == 1);
  CHECK(suite.at("errors") == 0);
  CHECK(suite.at("skipped") == 1);
  CHECK(suite.at("counted") ==
        json({{"cases", 3}, {"failures", 1}, {"errors", 0}, {"skipped", 1}, {"passed", 1}}));

  const std::string summary = read_text_file(dir.path() + "/summary.md");
  CHECK_THAT(summary, Catch::Contains("## Not passed"));
  CHECK_THAT(summary, Catch::Contains("3 of 3 scenario runs: 1 fail 1 pass 1 skip"));
  CHECK_THAT(summary, Catch::Contains("- expected: "));

  // `faultline report` turns the same report.json into the same files.
  auto md = run_command(kFaultline + " report " + dir.path() + "/report.json");
  CHECK(md.exit_code == 0);
  CHECK(md.out == summary);
  auto xml = run_command(kFaultline + " report --format junit " + dir.path() + "/report.json");
  CHECK(xml.out == read_text_file(dir.path() + "/junit.xml"));
  auto html = run_command(kFaultline + " report --format html -o " + dir.path() + "/report.html " +
                          dir.path() + "/report.json");
  CHECK(html.exit_code == 0);
  CHECK_THAT(read_text_file(dir.path() + "/report.html"), Catch::Contains("<!DOCTYPE html>"));
}

TEST_CASE("faultline report refuses what is not a faultline report, naming why", "[integration]") {
  TempDir dir;
  auto missing = run_command(kFaultline + " report " + dir.path() + "/none.json");
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("none.json"));
  auto scenario = run_command(kFaultline + " report " + kData + "/wrong-expectation.json");
  CHECK(scenario.exit_code == 2);
  CHECK_THAT(scenario.err, Catch::Contains("not a faultline report"));
  CHECK_THAT(scenario.err, Catch::Contains("schema_version"));
  CHECK_THAT(scenario.err, Catch::Contains("(missing)"));
  auto format = run_command(kFaultline + " report --format pdf x.json");
  CHECK(format.exit_code == 2);
  // A number no double holds is a usage error naming the file and the pointer, not an
  // internal error.
  const std::string huge = dir.path() + "/huge.json";
  std::ofstream(huge) << R"({"schema_version": 1e400})";
  auto overflow = run_command(kFaultline + " report " + huge);
  CHECK(overflow.exit_code == 2);
  CHECK_THAT(overflow.err, Catch::Contains(huge + ": /schema_version: expected a number a "
                                                  "double can hold; got 1e400"));
}

TEST_CASE("a run killed with SIGKILL mid-suite leaves a report that conforms",
          "[integration][ofi]") {
  TempDir dir;
  // exec: the signal must reach faultline itself, not a shell in front of it.
  BackgroundProcess run("exec " + kFaultline +
                        " run --suite faults --provider tcp --seed 3 --report-dir " + dir.path());
  REQUIRE(run.wait_for_output("[  4/", std::chrono::seconds(60)));
  run.kill(SIGKILL);
  REQUIRE(run.wait(std::chrono::seconds(10)));
  const json report = json::parse(read_text_file(dir.path() + "/report.json"));
  require_conforms(report);
  CHECK(report.at("run").at("complete") == false);
  const size_t finished = report.at("scenarios").size();
  CHECK(finished >= 4);
  CHECK(finished < report.at("summary").at("total").get<size_t>());
  CHECK(report.at("summary").at("finished") == finished);
  // The other files hold the same runs.
  CHECK_THAT(read_text_file(dir.path() + "/summary.md"), Catch::Contains("INCOMPLETE"));
  // junit.xml too: an error testcase says the run did not finish (not only passing ones).
  CHECK_THAT(read_text_file(dir.path() + "/junit.xml"),
             Catch::Contains("<error type=\"incomplete\" message=\"the run did not finish: " +
                             std::to_string(finished) + " of "));
}

TEST_CASE(
    "a report write that fails mid-run is said once, keeps the last good report and "
    "ends the run with exit 3",
    "[integration][ofi]") {
  TempDir dir;
  const std::string report_dir = dir.path() + "/report";
  BackgroundProcess run("exec " + kFaultline +
                        " run 'completion-error.*' --provider tcp --seed 3 --report-dir " +
                        report_dir);
  REQUIRE(run.wait_for_output("[  2/", std::chrono::seconds(60)));
  // The directory goes away and a file takes its name: every later write fails (ENOTDIR),
  // whoever runs the test (root ignores a read-only directory).
  std::filesystem::rename(report_dir, dir.path() + "/kept");
  std::ofstream(report_dir) << "not a directory";
  const auto code = run.wait(std::chrono::seconds(60));
  INFO(run.out() << run.err());
  REQUIRE(code.has_value());
  CHECK(*code == 3);
  const std::string err = run.err();
  const std::string said = "cannot write the report";
  CHECK(err.find(said) != std::string::npos);
  CHECK(err.find(said, err.find(said) + 1) == std::string::npos);  // once
  CHECK_THAT(err, Catch::Contains("the report is incomplete"));
  // The last good report is whole and conforms, with the runs finished before the failure.
  const json kept = json::parse(read_text_file(dir.path() + "/kept/report.json"));
  require_conforms(kept);
  CHECK(kept.at("scenarios").size() >= 1);
}

TEST_CASE("report files honour the umask", "[integration][ofi]") {
  TempDir dir;
  auto result =
      run_command("umask 077 && " + kFaultline +
                  " run completion-error.every-third --provider tcp --report-dir " + dir.path());
  REQUIRE(result.exit_code == 0);
  for (const char* file : {"/report.json", "/junit.xml", "/summary.md"}) {
    CAPTURE(file);
    const auto permissions = std::filesystem::status(dir.path() + file).permissions();
    CHECK((permissions & std::filesystem::perms::all) ==
          (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  }
}

TEST_CASE("a second run into a report directory in use is refused, naming the first's pid",
          "[integration][ofi][slow]") {
  TempDir dir;
  BackgroundProcess first("exec " + kFaultline +
                          " run 'completion-error.*' --provider tcp --report-dir " + dir.path());
  REQUIRE(first.wait_for_output("[  1/", std::chrono::seconds(60)));
  auto second = run_command(kFaultline + " run completion-error.every-third --provider tcp " +
                            "--report-dir " + dir.path());
  CHECK(second.exit_code == 2);
  CHECK_THAT(second.err, Catch::Contains("is in use by another faultline run (pid " +
                                         std::to_string(first.pid()) + ")"));
  REQUIRE(first.wait(std::chrono::seconds(60)) == std::optional<int>(0));
  // The files are the first run's alone, and the directory is free again.
  const json report = json::parse(read_text_file(dir.path() + "/report.json"));
  CHECK(report.at("scenarios").size() >= 9);
  CHECK(run_command(kFaultline + " run completion-error.every-third --provider tcp " +
                    "--report-dir " + dir.path())
            .exit_code == 0);
}

TEST_CASE("sut run and diagnose refuse a report directory in use, naming its holder's pid",
          "[integration][ofi]") {
  TempDir dir;
  auto held = faultline::reports::DirectoryLock::acquire(dir.path());
  REQUIRE(held.ok());
  const std::string in_use =
      "is in use by another faultline run (pid " + std::to_string(getpid()) + ")";
  auto sut = run_command(kFaultline + " sut run " + FAULTLINE_SOURCE_DIR +
                         "/scenarios/sut/ofi-sum-status-checked.json --report-dir " + dir.path());
  CHECK(sut.exit_code == 2);
  CHECK_THAT(sut.err, Catch::Contains(in_use));
  auto diagnose = run_command(kFaultline + " diagnose --report-dir " + dir.path());
  CHECK(diagnose.exit_code == 2);
  CHECK_THAT(diagnose.err, Catch::Contains(in_use));
  // Nothing of theirs was written beside the holder's lock.
  CHECK(!std::filesystem::exists(dir.path() + "/report.json"));
  CHECK(!std::filesystem::exists(dir.path() + "/diagnose.json"));
}

TEST_CASE("a diagnosis that cannot write its files ends with exit 3, said once",
          "[integration][ofi][slow]") {
  // diagnose.json is a directory, so every write of it fails.
  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/diagnose.json");
  auto diagnose = run_command(kFaultline + " diagnose --report-dir " + dir.path());
  INFO(diagnose.out << diagnose.err);
  CHECK(diagnose.exit_code == 3);
  const std::string said = "cannot write the diagnosis";
  const auto first = diagnose.err.find(said);
  REQUIRE(first != std::string::npos);
  CHECK(diagnose.err.find(said, first + 1) == std::string::npos);
  CHECK_THAT(diagnose.err, Catch::Contains("the diagnosis files are incomplete (exit 3)"));
}
