// faultline sut sweep on an unmodified libfabric program (tests/sut/ofi_sum.c over
// tcp;ofi_rxm): the clean run maps its call sites at both layers, each point runs and gets a
// verdict, names hold from run to run, shards collected give the one run's matrix, and one
// point runs again alone by its id.
#include <catch2/catch.hpp>

#ifdef FAULTLINE_SUT_OFI_SUM_CHECKED

#include <fstream>
#include <map>
#include <set>

#include "../sut/sut_runs.hpp"
#include "support/background_process.hpp"
#include "support/run_command.hpp"

using faultline::testing::CommandResult;
using faultline::testing::run_command;
using faultline::testing::TempDir;
using nlohmann::json;

namespace {

CommandResult sweep(const std::string& dir, const std::string& options,
                    const std::string& program = FAULTLINE_SUT_OFI_SUM_CHECKED) {
  CommandResult result =
      run_command(std::string(FAULTLINE_BINARY) + " sut sweep --report-dir " + dir + " --ok " +
                  faultline::testing::ofi_sum_line() + " " + options + " -- " + program);
  result.out += result.err;
  return result;
}

json report_of(const std::string& dir) {
  std::ifstream file(dir + "/report.json");
  return json::parse(file, nullptr, false);
}

std::vector<std::string> scenario_ids(const json& report) {
  std::vector<std::string> ids;
  for (const auto& scenario : report.at("scenarios")) ids.push_back(scenario.at("id"));
  return ids;
}

}  // namespace

TEST_CASE("sut sweep: the points of a libfabric program at both layers, shards merged as one",
          "[integration][ofi][slow]") {
  TempDir dir;
  const std::string whole = dir.path() + "/whole";
  const CommandResult run = sweep(whole, "--max-points 6");
  INFO(run.out);
  CHECK((run.exit_code == 0 || run.exit_code == 1));
  CHECK_THAT(run.out, Catch::Contains("the clean run passed") &&
                          Catch::Contains("faultline sut sweep: 6 fault points:"));
  const json report = report_of(whole);
  REQUIRE(report.contains("sweep"));
  const json& section = report.at("sweep");
  CHECK(section.at("clean").at("verdict") == "pass");
  // A point is a hang once quiet five times the clean run's longest stretch without a post or
  // completion (at least 2 s), or at its deadline.
  REQUIRE(section.at("clean").at("longest_quiet_ms").is_number());
  CHECK_THAT(run.out, Catch::Contains(" s pass without a post or completion (5 x the clean run's "
                                      "longest such stretch, "));
  // ofi_rxm's own calls are sites too: points can be put beneath it, at tcp.
  std::set<std::string> layers;
  for (const auto& site : section.at("sites"))
    layers.insert(site.at("outermost").get<bool>() ? "program"
                                                   : site.at("layer").get<std::string>());
  CHECK(layers.count("program") == 1);
  CHECK(layers.count("tcp") == 1);
  REQUIRE(section.at("points").size() == 6);
  for (const auto& point : section.at("points")) {
    INFO(point.dump());
    CHECK(point.at("verdict") != "error");
    CHECK(point.at("verdict") != "not-run");
  }
  // Three shards, collected: the same points with the same names (junit follows each).
  std::vector<std::string> shards;
  for (int shard = 1; shard <= 3; ++shard) {
    shards.push_back(dir.path() + "/shard" + std::to_string(shard));
    const CommandResult part =
        sweep(shards.back(), "--max-points 6 --shard " + std::to_string(shard) + "/3");
    INFO(part.out);
    CHECK(part.exit_code != 2);
  }
  const CommandResult collected = run_command(
      std::string(FAULTLINE_BINARY) + " sut sweep --report-dir " + dir.path() + "/all --baseline " +
      whole + "/report.json --collect " + shards[0] + " " + shards[1] + " " + shards[2]);
  INFO(collected.out << collected.err);
  CHECK_THAT(collected.out, Catch::Contains("collected 3 shard(s): 6 fault points"));
  const json merged = report_of(dir.path() + "/all");
  CHECK(scenario_ids(merged) == scenario_ids(report));
  for (size_t i = 0; i < 6; ++i) {
    const json& one = section.at("points")[i];
    const json& other = merged.at("sweep").at("points")[i];
    CHECK(one.at("id") == other.at("id"));
    // The program is deterministic: each point reaches the same verdict again (the baseline
    // lists any that did not).
    CHECK(one.at("verdict") == other.at("verdict"));
  }
  CHECK(merged.at("sweep").at("changes").empty());
  std::ifstream junit(dir.path() + "/all/junit.xml");
  const std::string junit_text((std::istreambuf_iterator<char>(junit)), {});
  CHECK_THAT(junit_text, Catch::Contains(section.at("points")[0].at("name").get<std::string>()));
}

#ifdef FAULTLINE_SUT_OFI_SUM_ASAN
TEST_CASE("sut sweep: an ASan build at -O0 and the optimized one name the same sites and points",
          "[integration][ofi][slow]") {
  // fi_send and fi_cq_read are inlined in the -O2 build (with wait_for_completion) and calls
  // of their own in the -O0 ASan one: the frames differ, their functions do not. (Before, the
  // ids hashed offsets: a rebuild renumbered every site, and --baseline compared other points.)
  TempDir dir;
  const CommandResult optimized = sweep(dir.path() + "/o2", "--max-points 6");
  INFO(optimized.out);
  REQUIRE(optimized.exit_code != 2);
  const CommandResult asan =
      sweep(dir.path() + "/asan", "--max-points 6 --baseline " + dir.path() + "/o2/report.json",
            std::string("env ASAN_OPTIONS=detect_leaks=0 ") + FAULTLINE_SUT_OFI_SUM_ASAN);
  INFO(asan.out);
  REQUIRE(asan.exit_code != 2);
  const json one = report_of(dir.path() + "/o2").at("sweep");
  const json other = report_of(dir.path() + "/asan").at("sweep");
  const auto sites_of = [](const json& section) {
    std::set<std::string> sites;
    bool named = false;
    for (const auto& site : section.at("sites")) {
      sites.insert(site.at("site").get<std::string>() + " " + site.at("call").get<std::string>());
      for (const auto& frame : site.at("stack"))
        named = named || frame.get<std::string>().find("(main)+0x") != std::string::npos;
    }
    CHECK(named);  // the frames name their functions
    return sites;
  };
  CHECK(sites_of(one) == sites_of(other));
  REQUIRE(one.at("points").size() == 6);
  REQUIRE(other.at("points").size() == 6);
  for (size_t i = 0; i < 6; ++i)
    CHECK(one.at("points")[i].at("id") == other.at("points")[i].at("id"));
  CHECK(other.at("changes").empty());
}
#endif  // FAULTLINE_SUT_OFI_SUM_ASAN

TEST_CASE("sut sweep: a sweep its budget cut short says how much it judged and exits 4",
          "[integration][ofi]") {
  TempDir dir;
  // A budget no point fits in: every point planned is left unrun.
  const CommandResult cut = sweep(dir.path() + "/cut", "--max-points 5 --budget 1ms");
  INFO(cut.out);
  CHECK(cut.exit_code == 4);
  // The latest it ends: the budget, a last point's deadline and its stacks' own budget.
  CHECK_THAT(cut.out, Catch::Contains("fits about 0 of the 5 points") &&
                          Catch::Contains("and its stacks up to 20 s: the sweep ends within") &&
                          Catch::Contains("0 of 5 points judged (5 not run):") &&
                          Catch::Contains("incomplete, 0 of 5 points judged") &&
                          Catch::Contains("--partial-ok"));
  // Each unrun point a skipped testcase saying why; the report itself complete.
  const std::string junit = faultline::testing::read_text_file(dir.path() + "/cut/junit.xml");
  size_t skipped = 0;
  for (size_t at = junit.find("<skipped message=\"not run: the budget ran out");
       at != std::string::npos; at = junit.find("<skipped message=\"not run: the budget", at + 1))
    ++skipped;
  CHECK(skipped == 5);
  CHECK(junit.find("type=\"incomplete\"") == std::string::npos);
  const json report = report_of(dir.path() + "/cut");
  CHECK(report.at("run").at("complete") == true);
  CHECK(report.at("scenarios").size() == 5);
  // The HTML says it at a glance: 0 of 5 judged, in red.
  const CommandResult html = run_command(std::string(FAULTLINE_BINARY) + " report --format html " +
                                         dir.path() + "/cut/report.json");
  CHECK_THAT(html.out, Catch::Contains("<span class=\"badge fail\">0 of 5 points judged</span>"));
  // Asked for: a partial sweep is done.
  const CommandResult partial =
      sweep(dir.path() + "/partial", "--max-points 5 --budget 1ms --partial-ok");
  INFO(partial.out);
  CHECK(partial.exit_code == 0);
}

TEST_CASE("sut sweep: one point again by its id, and a clean run that fails stops the sweep",
          "[integration][ofi][slow]") {
  TempDir dir;
  const CommandResult run = sweep(dir.path() + "/sweep", "--max-points 4");
  INFO(run.out);
  const json section = report_of(dir.path() + "/sweep").at("sweep");
  REQUIRE(section.at("points").size() == 4);
  const json& point = section.at("points")[0];
  for (int again = 0; again < 3; ++again) {
    const auto rerun = faultline::testing::sut_exec(
        dir.path() + "/again", "--point " + point.at("id").get<std::string>() + " --ok " +
                                   faultline::testing::ofi_sum_line() + " -- " +
                                   FAULTLINE_SUT_OFI_SUM_CHECKED);
    INFO(rerun.command.out);
    CHECK(rerun.report.at("verdict") == point.at("verdict"));
  }
  const CommandResult failing =
      run_command(std::string(FAULTLINE_BINARY) + " sut sweep --report-dir " + dir.path() +
                  "/failing -- false");
  CHECK(failing.exit_code == 2);
  CHECK_THAT(failing.err, Catch::Contains("the clean run (no fault, only observed) ended fail"));
  const auto bad = faultline::testing::sut_exec(dir.path() + "/bad", "--point status:x -- true");
  CHECK(bad.command.exit_code == 2);
  CHECK_THAT(bad.command.out, Catch::Contains("expected a point id"));
}

#ifdef FAULTLINE_SUT_MPI_ALLREDUCE

TEST_CASE("sut sweep: Open MPI's allreduce over tcp, with points in both ranks at both layers",
          "[integration][ofi][slow]") {
  TempDir dir;
  const std::string report_dir = dir.path() + "/sweep";
  const CommandResult run = run_command(
      std::string(FAULTLINE_BINARY) + " sut sweep --max-points 6 --report-dir " + report_dir +
      " --error 'MPI_ERR|error occurred' -- mpirun --allow-run-as-root --oversubscribe -n 2 "
      "--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp " +
      FAULTLINE_SUT_MPI_ALLREDUCE + " 2>&1");
  INFO(run.out);
  REQUIRE((run.exit_code == 0 || run.exit_code == 1));
  const json section = report_of(report_dir).at("sweep");
  // Each rank's sites (OMPI_COMM_WORLD_RANK), of the program's layer and of tcp beneath it.
  std::set<std::string> where;
  for (const auto& site : section.at("sites"))
    where.insert(
        "rank " + site.at("rank").dump() + " " +
        (site.at("outermost").get<bool>() ? "ofi_rxm" : site.at("layer").get<std::string>()));
  CHECK(where ==
        std::set<std::string>{"rank 0 ofi_rxm", "rank 0 tcp", "rank 1 ofi_rxm", "rank 1 tcp"});
  REQUIRE(section.at("points").size() == 6);
  for (const auto& point : section.at("points")) {
    INFO(point.dump());
    CHECK(point.at("verdict") != "error");
    CHECK(point.at("fault").contains("rank"));
  }
}

TEST_CASE("sut sweep: Open MPI's point list is the same in every run, and shards partition it",
          "[integration][ofi][slow]") {
  TempDir dir;
  // Open MPI retries its sends while ofi_rxm connects (-FI_EAGAIN, hundreds of times, as many
  // as the timing gives: 279 at one site, measured before): a refused attempt is no post. Its
  // progress engine polls from wherever it is called (MPI_Init, a wait, a collective): a
  // completion's site is its post's. ofi_rxm calls tcp beneath it directly or from its
  // deferred queue: one site for the layer. So the points are the same in every run, and
  // shards of separate runs partition them. No point runs (a budget of 1 ms): the list is what
  // is compared.
  const auto swept = [&](const std::string& name, const std::string& options) {
    const std::string report_dir = dir.path() + "/" + name;
    const CommandResult run = run_command(
        std::string(FAULTLINE_BINARY) + " sut sweep --budget 1ms --deadline 60 " + options +
        " --report-dir " + report_dir +
        " -- mpirun --allow-run-as-root --oversubscribe -n 2 --mca pml cm --mca mtl ofi "
        "--mca mtl_ofi_provider_include tcp " +
        FAULTLINE_SUT_MPI_ALLREDUCE + " 2>&1");
    INFO(run.out);
    const json report = report_of(report_dir);
    REQUIRE(report.is_object());
    return report.at("sweep");
  };
  const auto ids_of = [](const json& section) {
    std::vector<std::string> ids;
    for (const auto& point : section.at("points")) ids.push_back(point.at("id"));
    return ids;
  };
  const json first = swept("first", "");
  // Each rank's own post sites count each post once.
  size_t post_sites = 0;
  for (const auto& site : first.at("sites")) {
    const std::string call = site.at("call");
    if (!site.at("outermost").get<bool>() || call.rfind("fi_cq", 0) == 0) continue;
    ++post_sites;
    INFO(site.dump());
    CHECK(site.at("count").get<uint64_t>() < 50);
  }
  CHECK(post_sites >= 4);  // each rank's sends and receives
  const auto points = ids_of(first);
  REQUIRE(points.size() >= 100);
  for (const char* again : {"second", "third", "fourth", "fifth"}) {
    INFO(again);
    CHECK(ids_of(swept(again, "")) == points);
  }
  std::multiset<std::string> sharded;
  for (int shard = 1; shard <= 3; ++shard)
    for (const auto& id :
         ids_of(swept("shard" + std::to_string(shard), "--shard " + std::to_string(shard) + "/3")))
      sharded.insert(id);
  CHECK(sharded == std::multiset<std::string>(points.begin(), points.end()));
}

#endif  // FAULTLINE_SUT_MPI_ALLREDUCE

#endif  // FAULTLINE_SUT_OFI_SUM_CHECKED
