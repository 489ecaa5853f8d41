// A sweep as report.json holds it: the section, the score, what changed since a baseline,
// shards merged, each point as a report scenario, all within the report schema.
#include <catch2/catch.hpp>

#include "faultline/harness/runs/report_reader.hpp"
#include "faultline/harness/sweep/sweep.hpp"
#include "faultline/reports/formats.hpp"

using faultline::harness::sweep::PointRun;
using faultline::harness::sweep::SweepOptions;
using faultline::harness::sweep::SweepResult;
using nlohmann::json;
namespace sweep = faultline::harness::sweep;
namespace sut = faultline::harness::sut;

namespace {

json summary(const std::string& verdict, double seconds) {
  return {{"verdict", verdict},        {"exit_code", 0},           {"signal", nullptr},
          {"seconds", seconds},        {"faults_applied", 1},      {"first_error_line", ""},
          {"fault_to_error_ms", 12.4}, {"evidence", "it said so"}, {"hint", ""},
          {"instrumented", 3},         {"bypass", json::array()},  {"log", "points/0"}};
}

// Two sites, four points: detected, a hang with its stacks, silent corruption, one not run.
SweepResult a_sweep() {
  SweepResult result;
  result.clean = summary("pass", 1.2);
  result.clean.erase("fault_to_error_ms");
  result.clean["fault_to_error_ms"] = nullptr;
  const json events = {{{"event", "site"},
                        {"site", "00000000000000aa"},
                        {"call", "ibv_poll_cq"},
                        {"side", "recv"},
                        {"opcode", "RECV"},
                        {"layer", "verbs"},
                        {"count", 4},
                        {"stack", {"/lib/libapp.so(App::poll)+0x10"}}},
                       {{"event", "site"},
                        {"site", "00000000000000bb"},
                        {"call", "ibv_post_send"},
                        {"side", "send"},
                        {"opcode", "SEND"},
                        {"layer", "verbs"},
                        {"count", 2},
                        {"max_segments", 1},
                        {"stack", {"/lib/libapp.so(App::send)+0x20"}}}};
  result.sites = sut::call_sites(events.get<std::vector<json>>());
  json hang = summary("hang", 9);
  hang["stacks"] =
      "Thread 2 (LWP 7):\n#0  0x00007f in poll () from /lib/libc.so.6\n#1  0x0000401 in "
      "App::wait (this=0x1) at app.cpp:9\n#2  0x0000402 in main () at app.cpp:20\n"
      "Thread 1 (LWP 6):\n#0  0x00007f in poll () from /lib/libc.so.6\n#1  0x0000401 in "
      "App::wait (this=0x1) at app.cpp:9\n#2  0x0000402 in main () at app.cpp:20\n";
  result.runs = {{sut::point_at(result.sites[0], "status", 1, "first"), 0, summary("detected", 1)},
                 {sut::point_at(result.sites[0], "drop", 4, "last"), 1, hang},
                 {sut::point_at(result.sites[1], "corrupt_data", 1, "first"), 2,
                  summary("silent-corruption", 1)},
                 {sut::point_at(result.sites[1], "fail_post", 2, "last"), 3, std::nullopt}};
  result.points_total = 4;
  result.stopped = "the budget of 60 s ran out: 1 point(s) not run";
  return result;
}

SweepOptions options_of(unsigned shard) {
  SweepOptions options;
  options.command = {"./app", "--rounds", "4"};
  options.shard_index = shard;
  options.shard_count = 2;
  return options;
}

}  // namespace

TEST_CASE("sweep section: the score, the points and folded hung stacks", "[unit][sweep]") {
  const json section = sweep::sweep_section(a_sweep(), options_of(1));
  // One point the budget left unrun: the line says how much was judged first.
  CHECK(section.at("score_line") ==
        "3 of 4 points judged (1 not run): detected 1, masked 0, hang 1, undetected 0, "
        "silent-corruption 1, crashed 0, not-reached 0");
  const json& points = section.at("points");
  REQUIRE(points.size() == 4);
  CHECK(points[1].at("hung_stacks") == "2x main;App::wait;poll\n");
  CHECK(points[3].at("verdict") == "not-run");
  CHECK(points[0].at("row") == "App::poll+0x10 [00000000] ibv_poll_cq RECV");
  CHECK(sweep::sweep_exit_code(section) == 1);
  // Each point is a report scenario: detected passes, the hang fails, not-run is skipped.
  CHECK(sweep::point_scenario(points[0], section, 0).at("verdict") == "pass");
  CHECK(sweep::point_scenario(points[1], section, 1).at("verdict") == "fail");
  CHECK(sweep::point_scenario(points[3], section, 3).at("verdict") == "skip");
}

TEST_CASE("sweep section: an allowed verdict is xfail and fails no sweep, the others still do",
          "[unit][sweep]") {
  SweepOptions options = options_of(1);
  options.allow = {"hang"};
  const json section = sweep::sweep_section(a_sweep(), options);
  CHECK(section.at("allow") == json::array({"hang"}));
  const json hang = sweep::point_scenario(section.at("points")[1], section, 1);
  CHECK(hang.at("verdict") == "xfail");
  CHECK(hang.at("hint").get<std::string>().find("--allow") != std::string::npos);
  // The silent corruption is not allowed: the sweep still fails.
  CHECK(sweep::sweep_exit_code(section) == 1);
  options.allow = {"hang", "silent-corruption"};
  // Nothing fails now, but one point never ran: incomplete (4), unless a partial sweep is ok.
  CHECK(sweep::sweep_exit_code(sweep::sweep_section(a_sweep(), options)) == 4);
  CHECK(sweep::sweep_outcome(sweep::sweep_section(a_sweep(), options)).at("verdict") ==
        "not-reached");
  options.partial_ok = true;
  CHECK(sweep::sweep_exit_code(sweep::sweep_section(a_sweep(), options)) == 0);
  CHECK(faultline::harness::sut::check_allowed_verdicts({"hang", "crashed"}).empty());
  CHECK(faultline::harness::sut::check_allowed_verdicts({"detected"}).find("hang, undetected") !=
        std::string::npos);
}

TEST_CASE("sweep section: changes since a baseline name each point whose verdict moved",
          "[unit][sweep]") {
  const json before = sweep::sweep_section(a_sweep(), options_of(1));
  SweepResult later = a_sweep();
  later.runs[1].summary = summary("detected", 1);  // the hang fixed
  later.runs.pop_back();                           // a point gone
  const json changes = sweep::changes_since(before, sweep::sweep_section(later, options_of(1)));
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].at("before") == "hang");
  CHECK(changes[0].at("after") == "detected");
  CHECK(changes[1].at("after") == "absent");
}

TEST_CASE("sweep section: shards merge into the points of one run, in point order",
          "[unit][sweep]") {
  SweepResult first = a_sweep();
  SweepResult second = a_sweep();
  // Shard 1 of 2 ran the even points, shard 2 the odd ones.
  first.runs = {first.runs[0], first.runs[2]};
  second.runs = {second.runs[1], second.runs[3]};
  const auto merged = sweep::merge_sections(
      {sweep::sweep_section(second, options_of(2)), sweep::sweep_section(first, options_of(1))},
      {"shard2", "shard1"});
  REQUIRE(merged.ok());
  const json whole = sweep::sweep_section(a_sweep(), options_of(1));
  REQUIRE(merged->at("points").size() == 4);
  for (size_t i = 0; i < 4; ++i)
    CHECK(merged->at("points")[i].at("id") == whole.at("points")[i].at("id"));
  CHECK(merged->at("score_line") == whole.at("score_line"));
  // A shard of another program is refused, naming it.
  SweepOptions other = options_of(2);
  other.command = {"./other"};
  const auto refused = sweep::merge_sections(
      {sweep::sweep_section(first, options_of(1)), sweep::sweep_section(second, other)},
      {"shard1", "shard2"});
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().describe(),
             Catch::Contains("shard2: a shard of another sweep than shard1's: another program"));
}

TEST_CASE("sweep section: a report of a sweep is within the report schema, and draws a matrix",
          "[unit][sweep]") {
  json section = sweep::sweep_section(a_sweep(), options_of(1));
  section["changes"] = sweep::changes_since(section, section);
  json report = {{"schema_version", 1}, {"faultline_version", "0"}, {"sweep", section}};
  const auto problems = faultline::harness::report_schema_problems(report);
  for (const auto& problem : problems) CHECK_THAT(problem, !Catch::Contains("sweep"));
  const std::string markdown = faultline::reports::to_markdown(report);
  CHECK_THAT(markdown, Catch::Contains("## Sweep: 3 of 4 points judged") &&
                           Catch::Contains("| call site | status | drop | corrupt_data | "
                                           "fail_post |"));
  // The worst row first: the send site's silent corruption before the poll site's hang.
  CHECK(markdown.find("App::send+0x20") < markdown.find("App::poll+0x10"));
  CHECK_THAT(markdown, Catch::Contains("detected 12 ms"));
  const std::string html = faultline::reports::to_html(report);
  CHECK_THAT(html, Catch::Contains("<table class=\"grid sweep\">") &&
                       Catch::Contains("class=\"cell fail\"") &&
                       Catch::Contains("<span class=\"badge fail\">3 of 4 points judged</span>"
                                       "<span class=\"badge fail\">worst: silent-corruption"));
}

TEST_CASE("sweep section: a hang whose stacks name a 200,000-letter function folds it cut short",
          "[unit][sweep]") {
  // std::regex matched each frame and recursed once per letter: the sweep crashed (SIGSEGV).
  SweepResult result = a_sweep();
  const std::string name(200000, 'f');
  (*result.runs[1].summary)["stacks"] =
      "Thread 1 (LWP 6):\n#0  0x00007f in " + name + " () from /lib/libx.so\n#1  " + name + "\n";
  const json section = sweep::sweep_section(result, options_of(1));
  CHECK(section.at("points")[1].at("hung_stacks") ==
        "1x " + name.substr(0, 200) + "...;" + name.substr(0, 200) + "...\n");
}
