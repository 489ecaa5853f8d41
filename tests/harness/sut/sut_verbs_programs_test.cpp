// Third-party verbs programs, unmodified, under the verbs interposer on the Soft-RoCE lane's
// rxe0: rdma-core's ibv_rc_pingpong, perftest's ib_send_lat, UCX's ucx_perftest (UCT
// rc_verbs), and a program that reaches libibverbs only through dlopen/dlsym.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "support/background_process.hpp"
#include "support/local_port.hpp"
#include "support/test_targets.hpp"
#include "sut_runs.hpp"

using faultline::testing::BackgroundProcess;
using faultline::testing::SutRun;
using faultline::testing::TempDir;

namespace {

// The GID table entry of the port's IPv4 address (::ffff:a.b.c.d): perftest's -x, pingpong's -g.
std::string ipv4_gid_index(const std::string& device) {
  const std::filesystem::path gids = "/sys/class/infiniband/" + device + "/ports/1/gids";
  for (int index = 0; index < 16; ++index) {
    std::ifstream gid(gids / std::to_string(index));
    std::string text;
    if (gid >> text && text.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0)
      return std::to_string(index);
  }
  FAIL("no IPv4 GID on " << device);
  return "";
}

struct VerbsPair {
  std::string device = faultline::testing::verbs_device().device;
  std::string gid = ipv4_gid_index(device);
  std::string port = std::to_string(faultline::testing::free_port());
};

// The peer runs plainly in the background; faultline judges the other side. The peer of a
// faulted program waits for traffic that never comes: it is killed when the test ends.
SutRun run_against(const TempDir& dir, const std::string& peer, const std::string& judged) {
  BackgroundProcess background("exec " + peer);
  REQUIRE_FALSE(background.wait(std::chrono::milliseconds(800)).has_value());
  return faultline::testing::sut_exec(dir.path(), "--deadline 20 " + judged);
}

}  // namespace

TEST_CASE("sut verbs: a completion error in ibv_rc_pingpong and ib_send_lat is detected",
          "[integration][verbs]") {
  TempDir dir;
  VerbsPair pair;
  const std::string pingpong =
      "ibv_rc_pingpong -d " + pair.device + " -g " + pair.gid + " -n 20 -p " + pair.port;
  const SutRun clean = run_against(dir, pingpong, "-- " + pingpong + " 127.0.0.1");
  INFO(clean.command.out);
  CHECK(clean.report.at("verdict") == "pass");
  REQUIRE_FALSE(clean.events("instrumented").empty());
  CHECK(clean.events("instrumented")[0].at("device") == pair.device);

  VerbsPair again;
  const std::string rc = "ibv_rc_pingpong -d " + again.device + " -g " + again.gid + " -n 20 -p " +
                         again.port;
  const SutRun faulted =
      run_against(dir, rc, "--fault status=REM_ACCESS_ERR,nth=5 -- " + rc + " 127.0.0.1");
  INFO(faulted.command.out);
  CHECK(faulted.report.at("verdict") == "detected");
  CHECK(faulted.command.exit_code == 0);
  CHECK_THAT(faulted.report.at("first_error_line").get<std::string>(),
             Catch::Contains("remote access error"));
  REQUIRE(faulted.events("fault").size() == 1);
  CHECK(faulted.events("fault")[0].at("call") == "ibv_poll_cq");

  VerbsPair lat;
  const std::string send_lat =
      "ib_send_lat -d " + lat.device + " -x " + lat.gid + " -n 50 -p " + lat.port;
  const SutRun perftest =
      run_against(dir, send_lat, "--fault status=REM_ACCESS_ERR,nth=5 -- " + send_lat + " 127.0.0.1");
  INFO(perftest.command.out);
  CHECK(perftest.report.at("verdict") == "detected");
  CHECK_THAT(perftest.report.at("first_error_line").get<std::string>(),
             Catch::Contains("Completion with error"));
}

TEST_CASE("sut verbs: ucx_perftest over UCT rc_verbs detects a completion error",
          "[integration][verbs]") {
  TempDir dir;
  VerbsPair pair;
  const std::string perftest = "ucx_perftest -x rc_verbs -d " + pair.device +
                               ":1 -t am_lat -n 100 -p " + pair.port;
  const SutRun run = run_against(dir, perftest,
                                 "--fault status=REM_ACCESS_ERR,nth=5 -- " + perftest + " 127.0.0.1");
  INFO(run.command.out);
  // UCX prints the completion error and aborts on purpose: detected, not crashed.
  CHECK(run.report.at("verdict") == "detected");
  CHECK_THAT(run.report.at("first_error_line").get<std::string>(),
             Catch::Contains("completion with error"));
}

TEST_CASE("sut verbs: scribbled receive data in ibv_rc_pingpong -c is silent corruption",
          "[integration][verbs]") {
  TempDir dir;
  VerbsPair pair;
  const std::string pingpong =
      "ibv_rc_pingpong -d " + pair.device + " -g " + pair.gid + " -n 20 -c -p " + pair.port;
  // The server validates what it received (the first byte of each page) after the last
  // exchange, prints "invalid data in page N" and still exits 0.
  BackgroundProcess client("sleep 1; exec " + pingpong + " 127.0.0.1");
  const SutRun run = faultline::testing::sut_exec(
      dir.path(), "--deadline 20 --wrong 'invalid data' "
                  "--fault kind=corrupt_data,data=scribble,side=recv,every=1 -- " + pingpong);
  INFO(run.command.out);
  CHECK(run.report.at("verdict") == "silent-corruption");
  CHECK(run.report.at("exit_code") == 0);
  REQUIRE_FALSE(run.events("fault").empty());
  CHECK(run.events("fault")[0].at("bytes_changed") == 4096);
}

TEST_CASE("sut verbs: a failed post through the ibv_wr_* API is detected",
          "[integration][verbs]") {
  TempDir dir;
  VerbsPair pair;
  const std::string pingpong =
      "ibv_rc_pingpong -d " + pair.device + " -g " + pair.gid + " -n 20 -N -p " + pair.port;
  const SutRun run = run_against(dir, pingpong, "--fault kind=fail_post,post=send,errno=12,nth=4 -- " +
                                                    pingpong + " 127.0.0.1");
  INFO(run.command.out);
  CHECK(run.report.at("verdict") == "detected");
  REQUIRE(run.events("fault").size() == 1);
  CHECK(run.events("fault")[0].at("call") == "ibv_wr_complete");
  bool wr_api = false;
  for (const auto& event : run.events("instrumented")) wr_api |= event.value("api", "") == "ibv_wr";
  CHECK(wr_api);
}

TEST_CASE("sut verbs: a QP asking more inline than the cap is refused with the device's errno",
          "[integration][verbs]") {
  TempDir dir;
  VerbsPair pair;
  // UCT rc_verbs asks for 64 bytes of inline; the capped device allows 8.
  const std::string perftest = "ucx_perftest -x rc_verbs -d " + pair.device +
                               ":1 -t am_lat -n 100 -p " + pair.port;
  const SutRun run = run_against(dir, perftest,
                                 "--fault kind=limits,max_inline_data=8 -- " + perftest + " 127.0.0.1");
  INFO(run.command.out);
  CHECK(run.report.at("verdict") == "detected");
  REQUIRE(run.events("fault").size() == 1);
  const auto refusal = run.events("fault")[0];
  CHECK(refusal.at("call") == "ibv_create_qp");
  CHECK(refusal.at("field") == "max_inline_data");
  CHECK(refusal.at("cap") == 8);
  CHECK(refusal.at("errno") == 22);
  CHECK_THAT(run.report.at("first_error_line").get<std::string>(),
             Catch::Contains("Invalid argument"));
}

#ifdef FAULTLINE_SUT_VERBS_DLOPEN
TEST_CASE("sut verbs: a program reaching libibverbs only through dlopen/dlsym is instrumented",
          "[integration][verbs]") {
  TempDir dir;
  const std::string device = faultline::testing::verbs_device().device;
  const SutRun run = faultline::testing::sut_exec(
      dir.path(), "--fault kind=limits,max_qp_wr=100 -- " + std::string(FAULTLINE_SUT_VERBS_DLOPEN) +
                      " " + device);
  INFO(run.command.out);
  // Its dlsym'd ibv_open_device was this library's, and so was its ibv_query_device: it was
  // shown the capped device.
  CHECK_THAT(run.output(), Catch::Contains(device + " max_qp_wr=100"));
  REQUIRE_FALSE(run.events("instrumented").empty());
  CHECK(run.events("instrumented")[0].at("call") == "ibv_open_device");
  CHECK(run.report.at("verdict") == "masked");
}
#endif
