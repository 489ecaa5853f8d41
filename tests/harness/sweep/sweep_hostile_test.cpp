// faultline sut sweep against what users, files and signals give it (hostile round 4): options
// and input files refused before the program runs, --collect of shards that are not one
// sweep's refused and linear in the points, and a sweep stopped by a signal (from a user, or
// from the program itself) that stops every rank and still writes every report.
#include <catch2/catch.hpp>

#ifdef FAULTLINE_SUT_OFI_SUM_CHECKED

#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "../sut/sut_runs.hpp"
#include "faultline/harness/runs/report_reader.hpp"
#include "support/background_process.hpp"
#include "support/run_command.hpp"

using faultline::testing::BackgroundProcess;
using faultline::testing::CommandResult;
using faultline::testing::run_command;
using faultline::testing::TempDir;
using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const std::string kBinary = FAULTLINE_BINARY;

std::string sweep_command(const std::string& dir, const std::string& options) {
  return kBinary + " sut sweep --report-dir " + dir + " --ok " +
         faultline::testing::ofi_sum_line() + " " + options;
}

// Files a sweep might be given as a report (--baseline, or a shard's report.json), each of
// which once ran the program first, crashed, hung or was taken: name -> path.
std::vector<std::pair<std::string, std::string>> hostile_reports(const TempDir& dir) {
  const std::string at = dir.path() + "/inputs";
  fs::create_directories(at + "/folder");
  REQUIRE(mkfifo((at + "/fifo").c_str(), 0600) == 0);
  std::ofstream(at + "/deep.json") << std::string(200000, '[');
  std::ofstream(at + "/twice.json") << R"({"sweep": {}, "sweep": {}})";
  std::ofstream(at + "/types.json") << R"({"schema_version": 1, "sweep": {"points": 1}})";
  std::ofstream(at + "/run.json") << R"({"schema_version": "one"})";
  return {{"missing", at + "/none.json"},
          {"a folder", at + "/folder"},
          {"a FIFO", at + "/fifo"},
          {"/dev/zero", "/dev/zero"},
          {"200,000 levels", at + "/deep.json"},
          {"a key twice", at + "/twice.json"},
          {"a number for points", at + "/types.json"},
          {"not a report", at + "/run.json"}};
}

// A real sweep's report of `points` points, for --collect and --baseline. The program's file
// name sets the terminal's title and colours: nothing of it reaches the terminal or a report
// as a control character.
json small_sweep(const TempDir& dir, const std::string& name, int points) {
  const std::string program = dir.path() + "/\x1b]0;owned\x07\x1b[31msum";
  fs::copy_file(FAULTLINE_SUT_OFI_SUM_CHECKED, program);
  const std::string reports = dir.path() + "/" + name;
  const CommandResult run = run_command(
      sweep_command(reports, "--max-points " + std::to_string(points)) + " -- '" + program + "'");
  INFO(run.out << run.err);
  REQUIRE((run.exit_code == 0 || run.exit_code == 1));
  for (const std::string& text :
       {run.out, run.err, faultline::testing::read_text_file(reports + "/summary.md"),
        faultline::testing::read_text_file(reports + "/junit.xml")})
    CHECK(text.find('\x1b') == std::string::npos);
  const json report = json::parse(std::ifstream(reports + "/report.json"));
  CHECK(report.at("sweep").at("program").at(0) == program);  // kept as it was, in JSON
  return report;
}

// `report` as the report.json of a shard folder `dir`.
std::string shard_of(const std::string& dir, const json& report) {
  fs::create_directories(dir);
  std::ofstream(dir + "/report.json") << report.dump();
  return dir;
}

// No process whose command line starts with `command` is left (the sweep's own command line
// holds it too, further on).
bool none_left(const std::string& command) {
  return run_command("pgrep -f '^" + command + "'").out.empty();
}

}  // namespace

TEST_CASE("sut sweep: bad options and input files are refused before the program runs",
          "[integration][ofi]") {
  TempDir dir;
  const std::string marker = dir.path() + "/ran";
  const auto refused = [&](const std::string& options, const std::string& named) {
    CAPTURE(options);
    const auto started = std::chrono::steady_clock::now();
    const CommandResult run =
        run_command(sweep_command(dir.path() + "/r", options) + " -- touch " + marker);
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Catch::Contains(named));
    CHECK_FALSE(fs::exists(marker));
    CHECK(std::chrono::steady_clock::now() - started < 10s);  // a FIFO is not waited on
  };
  for (const std::string& option :
       std::vector<std::string>{"--max-points -1", "--max-points 18446744073709551616", "--seed -1",
                                "--seed 18446744073709551616", "--budget 0x10", "--budget nan",
                                "--deadline nan", "--deadline -3", "--jobs 0"})
    refused(option, option.substr(0, option.find(' ')));
  for (const auto& [what, path] : hostile_reports(dir)) {
    CAPTURE(what);
    refused("--baseline " + path, "--baseline " + path + ":");
    const std::string shard =
        dir.path() + "/shard-" + std::to_string(std::hash<std::string>{}(what));
    fs::create_directories(shard);
    if (path != dir.path() + "/inputs/none.json") fs::create_symlink(path, shard + "/report.json");
    const CommandResult collected = run_command(kBinary + " sut sweep --collect " + shard +
                                                " --report-dir " + dir.path() + "/all");
    CHECK(collected.exit_code == 2);
    CHECK_THAT(collected.err, Catch::Contains(shard + "/report.json"));
  }
}

TEST_CASE(
    "sut sweep --collect: shards of two sweeps are refused, a folder in use too, in linear time",
    "[integration][ofi][slow]") {
  TempDir dir;
  const json report = small_sweep(dir, "one", 2);
  const json& section = report.at("sweep");
  REQUIRE(section.at("points").size() == 2);
  const auto collect = [&](const std::vector<std::string>& shards, const std::string& into) {
    std::string command = kBinary + " sut sweep --report-dir " + into + " --collect";
    for (const auto& shard : shards) command += " " + shard;
    return run_command(command);
  };
  // Each was merged without a word, the second's verdicts over the first's.
  json other_program = report;
  other_program["sweep"]["program"] = json::array({"/bin/other"});
  json other_total = report;
  other_total["sweep"]["points_total"] = section.at("points_total").get<int>() + 1;
  json other_point = report;
  other_point["sweep"]["points"][0]["id"] = "status:0123456789abcdef:fi_cq_read:any:-:-:r-:n1";
  for (const auto& [other, why] : {std::pair{other_program, "another program"},
                                   std::pair{other_total, "another number of points"},
                                   std::pair{other_point, "shards of different sweeps"}}) {
    CAPTURE(why);
    const CommandResult merged =
        collect({shard_of(dir.path() + "/a", report), shard_of(dir.path() + "/b", other)},
                dir.path() + "/merged");
    CHECK(merged.exit_code == 2);
    CHECK_THAT(merged.err, Catch::Contains(why));
    CHECK_FALSE(fs::exists(dir.path() + "/merged/report.json"));
  }
  // A folder another command holds (its lock, with this test's pid) is not written into.
  fs::create_directories(dir.path() + "/held");
  const int held = open((dir.path() + "/held/.faultline.lock").c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(flock(held, LOCK_EX | LOCK_NB) == 0);
  REQUIRE(write(held, std::to_string(getpid()).data(), std::to_string(getpid()).size()) > 0);
  const CommandResult in_use = collect({shard_of(dir.path() + "/a", report)}, dir.path() + "/held");
  CHECK(in_use.exit_code == 2);
  CHECK_THAT(in_use.err, Catch::Contains(std::to_string(getpid())));
  close(held);
  // Linear: ten times the points take about ten times as long, not a hundred (quadratic) or
  // more (800 points took 65 s, 400 11.5 s).
  const auto timed = [&](size_t points) {
    json big = report;
    json& all = big["sweep"]["points"];
    const json one = all.at(0);
    all = json::array();
    for (size_t i = 0; i < points; ++i) {
      json point = one;
      point["number"] = i;
      point["id"] = one.at("id").get<std::string>() + "." + std::to_string(i);
      point["name"] = one.at("name").get<std::string>() + " #" + std::to_string(i);
      all.push_back(point);
    }
    big["sweep"]["points_total"] = points;
    const std::string shard = shard_of(dir.path() + "/big" + std::to_string(points), big);
    const auto started = std::chrono::steady_clock::now();
    const CommandResult merged = collect({shard}, dir.path() + "/merged" + std::to_string(points));
    INFO(merged.err);
    CHECK(merged.exit_code != 2);
    CHECK_THAT(merged.out, Catch::Contains(std::to_string(points) + " fault points"));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  const double small = timed(800);
  const double large = timed(8000);
  INFO("800 points: " << small << " s, 8000: " << large << " s");
  CHECK(large < 25 * std::max(small, 0.2));
}

TEST_CASE("sut sweep: a signal during a point stops every rank and writes every report",
          "[integration][ofi][slow]") {
  // The clean run leaves `clean`; a point's run then waits in two sleeps after the program
  // (two ranks of something that hangs). `kill_sweep`: the point's program itself sends the
  // sweep SIGTERM (the sweep is its parent's parent), as a program of a user's did.
  for (const auto& [signal, kill_sweep] :
       {std::pair{SIGTERM, false}, std::pair{SIGHUP, false}, std::pair{SIGTERM, true}}) {
    CAPTURE(signal, kill_sweep);
    TempDir dir;
    const std::string mark = "31" + std::to_string(signal) + (kill_sweep ? "1" : "0") + ".5";
    const std::string after =
        std::string(kill_sweep ? "kill -TERM $(ps -o ppid= -p $PPID); " : "") + "sleep " + mark +
        " & sleep " + mark;
    const std::string program = std::string(FAULTLINE_SUT_OFI_SUM_CHECKED) + "; if [ -e " +
                                dir.path() + "/clean ]; then " + after + "; fi; touch " +
                                dir.path() + "/clean";
    BackgroundProcess sweep("exec " + sweep_command(dir.path() + "/r", "--max-points 4") +
                            " -- sh -c '" + program + "'");
    if (!kill_sweep) {
      for (int i = 0; i < 300 && none_left("sleep " + mark); ++i)
        std::this_thread::sleep_for(100ms);
      REQUIRE_FALSE(none_left("sleep " + mark));
      sweep.kill(signal);
    }
    const auto code = sweep.wait(60s);
    INFO(sweep.out() << sweep.err());
    REQUIRE(code.has_value());
    CHECK(*code == 3);
    CHECK_THAT(sweep.err(), Catch::Contains(std::string("interrupted by SIG") +
                                            (signal == SIGTERM ? "TERM" : "HUP")));
    CHECK(none_left("sleep " + mark));
    // The point that ran has its own sut.json; the report conforms and says what did not run.
    CHECK(fs::exists(dir.path() + "/r/points/0/sut.json"));
    auto report = faultline::harness::read_report(dir.path() + "/r/report.json");
    REQUIRE(report.ok());
    CHECK_THAT(report->at("sweep").at("stopped").get<std::string>(),
               Catch::Contains("interrupted by"));
    for (const auto& point : report->at("sweep").at("points")) {
      CAPTURE(point.dump());
      CHECK(point.at("verdict") == "not-run");
      CHECK_THAT(point.at("evidence").get<std::string>(), Catch::StartsWith("interrupted by"));
    }
  }
}

#endif
