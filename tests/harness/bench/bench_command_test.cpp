// faultline bench with tiny sizes: every benchmark still runs and prints what ci/bench reads.
// (The numbers are measured by ci/bench, not judged here: these are not timed tests.)
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../harness_test_paths.hpp"
#include "support/run_command.hpp"

using faultline::testing::run_command;
using nlohmann::json;

namespace {

json bench(const std::string& args) {
  auto run = run_command(kFaultline + " bench " + args + " --json");
  INFO(args << "\n" << run.out << run.err);
  REQUIRE(run.exit_code == 0);
  return json::parse(run.out);
}

void check_latency_rows(const json& result, std::vector<size_t> sizes) {
  REQUIRE(result.at("rows").size() == sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    const json& row = result["rows"][i];
    CAPTURE(row.dump());
    CHECK(row.at("bytes") == sizes[i]);
    CHECK(row.at("iterations") == 20);
    CHECK(row.at("min_us").get<double>() > 0);
    CHECK(row.at("min_us").get<double>() <= row.at("median_us").get<double>());
    CHECK(row.at("median_us").get<double>() <= row.at("p99_us").get<double>());
    CHECK(row.at("p99_us").get<double>() <= row.at("p99_9_us").get<double>());
    CHECK(row.at("p99_9_us").get<double>() <= row.at("max_us").get<double>());
    CHECK(row.at("min_us").get<double>() <= row.at("mean_us").get<double>());
    CHECK(row.at("stdev_us").get<double>() >= 0);
  }
}

void check_bandwidth_rows(const json& result, std::vector<size_t> sizes) {
  REQUIRE(result.at("rows").size() == sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    CHECK(result["rows"][i].at("bytes") == sizes[i]);
    CHECK(result["rows"][i].at("mib_per_second").get<double>() > 0);
    CHECK(result["rows"][i].at("messages_per_second").get<double>() > 0);
  }
}

}  // namespace

// 20000 B is above rxm's 16 KiB eager size: the responder has to drive its last send to
// completion, or the client waits forever for it.
TEST_CASE("bench pingpong measures send and write on tcp and shm, above the eager size",
          "[integration][ofi]") {
  for (const std::string provider : {"tcp", "shm"}) {
    for (const std::string op : {"send", "write"}) {
      CAPTURE(provider, op);
      const json result = bench("pingpong --provider " + provider + " --op " + op +
                                " --sizes 8,20000 --iterations 20 --warmup 2");
      CHECK(result.at("benchmark") == "pingpong");
      CHECK(result.at("provider") == provider);
      check_latency_rows(result, {8, 20000});
    }
  }
  const json idle = bench("pingpong --provider shm --sizes 64 --iterations 20 --idle-decorator");
  CHECK(idle.at("idle_decorator") == true);
  check_latency_rows(idle, {64});
}

TEST_CASE("bench pingpong --two-processes answers from a process of its own",
          "[integration][ofi]") {
  // The responder forked, as fi_pingpong's server is its own process; above the eager size too.
  for (const std::string provider : {"tcp", "shm"}) {
    CAPTURE(provider);
    const json result = bench("pingpong --provider " + provider +
                              " --sizes 8,20000 --iterations 20 --warmup 2 --two-processes");
    CHECK(result.at("two_processes") == true);
    check_latency_rows(result, {8, 20000});
  }
  auto write = run_command(kFaultline + " bench pingpong --op write --two-processes");
  CHECK(write.exit_code == 2);
  CHECK(write.err.find("send/recv only") != std::string::npos);
}

// A process killed with SIGKILL leaves its shm regions in /dev/shm, named after its pid; a
// later process given that pid found them and failed fi_enable (EBUSY) or died of SIGBUS.
TEST_CASE("shm regions left behind under this process's pid do not stop it", "[integration][ofi]") {
  auto run = run_command("bash -c 'touch /dev/shm/$$:0:0 /dev/shm/$$:0:1; exec " + kFaultline +
                         " bench pingpong --provider shm --sizes 8 --iterations 5 --json'");
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
}

TEST_CASE("bench bandwidth streams writes and sends with a window", "[integration][ofi]") {
  for (const std::string op : {"write", "send"}) {
    CAPTURE(op);
    const json result = bench("bandwidth --provider tcp --op " + op +
                              " --sizes 4096,65536 --iterations 20 --warmup 4 --window 4");
    CHECK(result.at("window") == 4);
    check_bandwidth_rows(result, {4096, 65536});
  }
}

TEST_CASE("bench allreduce sums on a ring of 2 and 3 and reports bus bandwidth",
          "[integration][ofi]") {
  const json result =
      bench("allreduce --provider shm --ranks 2,3 --sizes 4096 --iterations 2 --warmup 0");
  REQUIRE(result.at("rows").size() == 2);
  for (const json& row : result["rows"]) {
    CAPTURE(row.dump());
    CHECK(row.at("busbw_gb_s").get<double>() > 0);
    const double n = row.at("ranks").get<double>();
    CHECK(row.at("busbw_gb_s").get<double>() ==
          Approx(row.at("algbw_gb_s").get<double>() * 2 * (n - 1) / n));
    CHECK(row.at("wrong") == 0);  // every element of every iteration on every rank checked
  }
}

TEST_CASE("bench allreduce runs either algorithm by name, and auto by size", "[integration][ofi]") {
  for (const std::string algorithm : {"ring", "recursive_doubling", "halving_doubling", "auto"}) {
    CAPTURE(algorithm);
    const json result = bench(
        "allreduce --provider shm --ranks 2,3 --sizes 4096,262144 "
        "--iterations 2 --warmup 0 --algorithm " +
        algorithm);
    CHECK(result.at("algorithm") == algorithm);
    REQUIRE(result.at("rows").size() == 4);
    for (const json& row : result["rows"]) CHECK(row.at("wrong") == 0);
  }
  auto unknown = run_command(kFaultline + " bench allreduce --provider shm --algorithm tree");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("--algorithm") && Catch::Contains("tree"));
}

TEST_CASE("bench prints its tables as the field's tools do: ib_send_lat's, nccl-tests'",
          "[integration][ofi]") {
  auto latency = run_command(kFaultline +
                             " bench pingpong --provider shm --sizes 8 --iterations 20 --warmup 2");
  INFO(latency.out << latency.err);
  REQUIRE(latency.exit_code == 0);
  // perftest's columns, in its order.
  const std::vector<std::string> headings = {
      "#bytes",        "#iterations",          "t_min[usec]",
      "t_max[usec]",   "t_typical[usec]",      "t_avg[usec]",
      "t_stdev[usec]", "99% percentile[usec]", "99.9% percentile[usec]"};
  size_t at = 0;
  for (const auto& heading : headings) {
    const size_t found = latency.out.find(heading, at);
    CHECK(found != std::string::npos);
    at = found == std::string::npos ? at : found;
  }
  auto allreduce = run_command(kFaultline + " bench allreduce --provider shm --ranks 2,3 " +
                               "--sizes 4096 --iterations 2 --warmup 0");
  INFO(allreduce.out << allreduce.err);
  REQUIRE(allreduce.exit_code == 0);
  CHECK_THAT(allreduce.out, Catch::Contains("busbw(GB/s)  #wrong\n"));
  CHECK_THAT(allreduce.out, Catch::Contains("# Out of bounds values : 0 OK\n"));
  CHECK_THAT(allreduce.out, Catch::Contains("# Avg bus bandwidth    : "));
}

TEST_CASE("bench control times a step round trip and an all-pairs schedule", "[integration][ofi]") {
  const json result = bench("control --agents 3 --barriers 5 --repetitions 1");
  CHECK(result.at("pair_runs") == 3);
  CHECK(result.at("agents") == 3);
  CHECK(result.at("run_without_steps_ms").get<double>() > 0);
  CHECK(result.at("all_pairs_seconds").get<double>() > 0);
}

TEST_CASE("bench on rxe: ping-pong and bandwidth over verbs", "[integration][verbs]") {
  for (const std::string op : {"send", "write"}) {
    CAPTURE(op);
    check_latency_rows(bench("pingpong --transport verbs --device rxe0 --op " + op +
                             " --sizes 8,4096 --iterations 20 --warmup 2"),
                       {8, 4096});
  }
  check_bandwidth_rows(bench("bandwidth --transport verbs --device rxe0 --sizes 65536 "
                             "--iterations 20 --warmup 4 --window 8"),
                       {65536});
}

TEST_CASE("bench takes perftest's and nccl-tests' flags: -s -n -a -b -e -f -d -I",
          "[integration][ofi]") {
  check_latency_rows(bench("pingpong --provider shm -s 64 -n 20 -I 0"), {64});
  const json all = bench("pingpong --provider shm -a -n 20 --warmup 1");
  REQUIRE(all.at("rows").size() == 23);  // 2 B to 8 MiB, every power of two
  CHECK(all["rows"][0].at("bytes") == 2);
  CHECK(all["rows"][22].at("bytes") == 8388608);
  check_latency_rows(bench("pingpong -d lo -b 8 -e 8K -f 32 -n 20"), {8, 256, 8192});
  const json range = bench("allreduce --provider shm --ranks 2 -b 1K -e 4K -n 5");
  REQUIRE(range.at("rows").size() == 3);
  CHECK(range["rows"][2].at("bytes") == 4096);
  // -D: as many round trips as fit the time, in one process and in two: judged by the round
  // trips' own mean (the latency is half of one, as perftest reports it), so a busy host's
  // fewer, slower round trips still fill the 0.2 s.
  for (const std::string form : {"", " --two-processes"}) {
    const json timed = bench("pingpong --provider shm -s 64 -D 0.2" + form);
    CAPTURE(form, timed.dump());
    const json& row = timed["rows"][0];
    const double round_trips_seconds = static_cast<double>(row.at("iterations").get<uint64_t>()) *
                                       2 * row.at("mean_us").get<double>() * 1e-6;
    CHECK(row.at("iterations").get<uint64_t>() > 1);
    CHECK(round_trips_seconds > 0.1);
    CHECK(round_trips_seconds < 0.2 + 20 * row.at("max_us").get<double>() * 1e-6);
  }
  auto twice = run_command(kFaultline + " bench pingpong -a -s 64");
  CHECK(twice.exit_code == 2);
  CHECK_THAT(twice.err, Catch::Contains("give sizes one way"));
  auto backwards = run_command(kFaultline + " bench pingpong -b 64 -e 8");
  CHECK(backwards.exit_code == 2);
  CHECK_THAT(backwards.err, Catch::Contains("expected 0 < b <= e"));
  auto both = run_command(kFaultline + " bench pingpong --server --client 127.0.0.1");
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.err, Catch::Contains("--server and --client"));
}

TEST_CASE("bench refuses what it cannot measure, naming it", "[integration]") {
  auto unknown = run_command(kFaultline + " bench pingpong --provider no-such-provider");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("no-such-provider") != std::string::npos);
  auto bad_op = run_command(kFaultline + " bench bandwidth --op read");
  CHECK(bad_op.exit_code == 2);
  auto odd_size = run_command(kFaultline + " bench allreduce --sizes 6");
  CHECK(odd_size.exit_code == 2);
  CHECK(odd_size.err.find("multiple of 4") != std::string::npos);
  auto no_ring = run_command(kFaultline + " bench allreduce --ranks 1");
  CHECK(no_ring.exit_code == 2);
}

TEST_CASE("bench allreduce --no-status-check measures the ring without reading statuses",
          "[integration][ofi]") {
  auto unchecked = run_command(kFaultline +
                               " bench allreduce --provider shm --ranks 2 --sizes 16384 "
                               "--iterations 20 --no-status-check --json");
  INFO(unchecked.out << unchecked.err);
  REQUIRE(unchecked.exit_code == 0);
  const auto rows = nlohmann::json::parse(unchecked.out).at("rows");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].at("status_checked") == false);
  CHECK(rows[0].at("median_us").get<double>() > 0);
  auto checked = run_command(kFaultline +
                             " bench allreduce --provider shm --ranks 2 --sizes 16384 "
                             "--iterations 20 --json");
  REQUIRE(checked.exit_code == 0);
  CHECK(nlohmann::json::parse(checked.out).at("rows")[0].at("status_checked") == true);
}

TEST_CASE("bench --help shows bench's own examples", "[integration]") {
  auto help = run_command(kFaultline + " bench --help");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("faultline bench pingpong --provider shm") &&
                           Catch::Contains("faultline bench allreduce"));
}
