// Third-party verbs programs, unmodified, under the verbs interposer on the Soft-RoCE lane's
// rxe0: rdma-core's ibv_rc_pingpong, perftest's ib_send_lat, UCX's ucx_perftest (UCT
// rc_verbs), a program that reaches libibverbs only through dlopen/dlsym, and one that shows
// what moving a QP to the error state leaves behind.
#include <catch2/catch.hpp>
#include <regex>

#include "faultline/harness/sut/sut_scenario.hpp"
#include "support/background_process.hpp"
#include "support/local_port.hpp"
#include "support/test_targets.hpp"
#include "sut_runs.hpp"

using faultline::testing::BackgroundProcess;
using faultline::testing::SutRun;
using faultline::testing::TempDir;

namespace {

std::string ipv4_gid_of(const std::string& device) {
  const std::string gid = faultline::harness::sut::ipv4_gid_index(device);
  if (gid.empty()) FAIL("no IPv4 GID on " << device);
  return gid;
}

// A server and a client on the verbs device, talking on a fresh port.
struct VerbsPair {
  std::string device = faultline::testing::verbs_device().device;
  std::string gid = ipv4_gid_of(device);
  std::string port = std::to_string(faultline::testing::free_port());

  std::string rc_pingpong(const std::string& options) const {
    return "ibv_rc_pingpong -d " + device + " -g " + gid + " -n 20 " + options + " -p " + port;
  }
  std::string send_lat() const {
    return "ib_send_lat -d " + device + " -x " + gid + " -n 50 -p " + port;
  }
  std::string ucx_perftest() const {
    return "ucx_perftest -x rc_verbs -d " + device + ":1 -t am_lat -n 100 -p " + port;
  }
};

// A shell prefix that waits until something listens on TCP `port` (the servers' exchange
// port): on a busy host a server takes its time to start, and a client too early is refused.
std::string when_listening(const std::string& port) {
  return "until ss -Hltn 'sport = :" + port + "' | grep -q .; do sleep 0.05; done; ";
}

// The exchange port of a VerbsPair command (its "-p PORT").
std::string port_of(const std::string& command) {
  std::smatch found;
  REQUIRE(std::regex_search(command, found, std::regex(" -p ([0-9]+)")));
  return found[1];
}

// The peer runs plainly in the background; faultline judges the other side once the peer
// listens. The peer of a faulted program waits for traffic that never comes: it is killed
// when the test ends.
SutRun run_against(const TempDir& dir, const std::string& peer, const std::string& judged) {
  BackgroundProcess background("exec " + peer);
  BackgroundProcess listening(when_listening(port_of(peer)));
  const auto heard = listening.wait(std::chrono::seconds(60));
  REQUIRE_FALSE(background.wait(std::chrono::milliseconds(0)).has_value());
  REQUIRE(heard == 0);
  return faultline::testing::sut_exec(dir.path(), "--deadline 20 " + judged);
}

// `server` in the background, the same command as its client under `fault`.
SutRun client_under(const TempDir& dir, const std::string& server, const std::string& fault) {
  return run_against(dir, server,
                     (fault.empty() ? "" : "--fault " + fault) + " -- " + server + " 127.0.0.1");
}

}  // namespace

TEST_CASE("sut verbs: a completion error in ibv_rc_pingpong and ib_send_lat is detected",
          "[integration][verbs]") {
  TempDir dir;
  VerbsPair pair;
  const SutRun clean = client_under(dir, pair.rc_pingpong(""), "");
  INFO(clean.command.out);
  CHECK(clean.report.at("verdict") == "pass");
  REQUIRE_FALSE(clean.events("instrumented").empty());
  CHECK(clean.events("instrumented")[0].at("device") == pair.device);

  const SutRun faulted =
      client_under(dir, VerbsPair().rc_pingpong(""), "status=REM_ACCESS_ERR,nth=5");
  INFO(faulted.command.out);
  CHECK(faulted.report.at("verdict") == "detected");
  CHECK(faulted.command.exit_code == 0);
  CHECK_THAT(faulted.report.at("first_error_line").get<std::string>(),
             Catch::Contains("remote access error"));
  REQUIRE(faulted.events("fault").size() == 1);
  CHECK(faulted.events("fault")[0].at("call") == "ibv_poll_cq");

  const SutRun perftest = client_under(dir, VerbsPair().send_lat(), "status=REM_ACCESS_ERR,nth=5");
  INFO(perftest.command.out);
  CHECK(perftest.report.at("verdict") == "detected");
  CHECK_THAT(perftest.report.at("first_error_line").get<std::string>(),
             Catch::Contains("Completion with error"));
}

TEST_CASE("sut verbs: ucx_perftest over UCT rc_verbs detects a completion error",
          "[integration][verbs]") {
  TempDir dir;
  const SutRun run = client_under(dir, VerbsPair().ucx_perftest(), "status=REM_ACCESS_ERR,nth=5");
  INFO(run.command.out);
  // UCX prints the completion error and aborts on purpose: detected, not crashed. The 5th
  // completion is a send's or a receive's, as the run goes: "send completion with error" or
  // "receive completion[0] with error".
  CHECK(run.report.at("verdict") == "detected");
  CHECK_THAT(run.report.at("first_error_line").get<std::string>(),
             Catch::Contains("completion") && Catch::Contains("with error") &&
                 Catch::Contains("remote access error"));
}

TEST_CASE("sut verbs: scribbled receive data in ibv_rc_pingpong -c is silent corruption",
          "[integration][verbs]") {
  TempDir dir;
  const std::string pingpong = VerbsPair().rc_pingpong("-c");
  // The server validates what it received (the first byte of each page) after the last
  // exchange, prints "invalid data in page N" and still exits 0.
  BackgroundProcess client(when_listening(port_of(pingpong)) + "exec " + pingpong + " 127.0.0.1");
  const SutRun run =
      faultline::testing::sut_exec(dir.path(),
                                   "--deadline 20 --wrong 'invalid data' "
                                   "--fault kind=corrupt_data,data=scribble,side=recv,every=1 -- " +
                                       pingpong);
  INFO(run.command.out);
  CHECK(run.report.at("verdict") == "silent-corruption");
  CHECK(run.report.at("exit_code") == 0);
  REQUIRE_FALSE(run.events("fault").empty());
  CHECK(run.events("fault")[0].at("bytes_changed") == 4096);
}

TEST_CASE("sut verbs: a failed post through the ibv_wr_* API is detected", "[integration][verbs]") {
  TempDir dir;
  const SutRun run =
      client_under(dir, VerbsPair().rc_pingpong("-N"), "kind=fail_post,post=send,errno=12,nth=4");
  INFO(run.command.out);
  CHECK(run.report.at("verdict") == "detected");
  REQUIRE(run.events("fault").size() == 1);
  CHECK(run.events("fault")[0].at("call") == "ibv_wr_complete");
  bool wr_api = false;
  for (const auto& event : run.events("instrumented")) wr_api |= event.value("api", "") == "ibv_wr";
  CHECK(wr_api);
}

TEST_CASE("sut verbs: ibv_uc_pingpong with scribbled receives exits 0 unchecked: undetected",
          "[integration][verbs]") {
  TempDir dir;
  const VerbsPair pair;
  // Measured before: 4096 changed bytes a receive, exit 0, and the verdict `masked` although
  // nothing looked at its data.
  const std::string pingpong =
      "ibv_uc_pingpong -d " + pair.device + " -g " + pair.gid + " -n 20 -p " + pair.port;
  const SutRun run =
      client_under(dir, pingpong, "kind=corrupt_data,data=scribble,side=recv,every=1");
  INFO(run.command.out);
  CHECK(run.report.at("verdict") == "undetected");
  CHECK(run.report.at("exit_code") == 0);
  CHECK_THAT(run.report.at("evidence").get<std::string>(),
             Catch::Contains("likely silent corruption"));
  REQUIRE_FALSE(run.events("fault").empty());
  CHECK(run.events("fault")[0].at("bytes_changed") == 4096);
}

TEST_CASE("sut verbs: scribbled sends reach the peer, posted or built with ibv_wr_*",
          "[integration][verbs]") {
  const std::string api = GENERATE(std::string("-c"), std::string("-c -N"));
  TempDir dir;
  const std::string server = VerbsPair().rc_pingpong(api);
  // The client's sends go out from a changed copy: its own buffer keeps its bytes, the
  // server's receives get the changed ones and its check at the end says so. The client exits
  // 0 and nothing checked its output: undetected.
  BackgroundProcess background("exec " + server);
  BackgroundProcess listening(when_listening(port_of(server)));
  REQUIRE(listening.wait(std::chrono::seconds(60)) == 0);
  const SutRun run = faultline::testing::sut_exec(
      dir.path(), "--deadline 20 --fault kind=corrupt_data,data=scribble,side=send,every=1 -- " +
                      server + " 127.0.0.1");
  INFO(run.command.out << background.out());
  REQUIRE(background.wait(std::chrono::seconds(20)) == 0);
  CHECK_THAT(background.out(), Catch::Contains("invalid data in page"));
  CHECK(run.report.at("verdict") == "undetected");
  REQUIRE_FALSE(run.events("fault").empty());
  const auto fault = run.events("fault")[0];
  CHECK(fault.at("bytes_changed") == 4096);
  CHECK(fault.at("call") == (api == "-c" ? "ibv_post_send" : "ibv_wr_set_sge"));
}

TEST_CASE("sut verbs: segment_count reaches sends built with ibv_wr_*", "[integration][verbs]") {
  TempDir dir;
  const SutRun run = client_under(dir, VerbsPair().rc_pingpong("-N"),
                                  "kind=segment_count,mode=split,into=2,post=send,nth=3");
  INFO(run.command.out);
  REQUIRE(run.events("fault").size() == 1);
  const auto fault = run.events("fault")[0];
  CHECK(fault.at("call") == "ibv_wr_set_sge");
  CHECK(fault.at("segments") == nlohmann::json::array({1, 2}));
  CHECK(fault.at("bytes") == nlohmann::json::array({4096, 4096}));
  // ibv_rc_pingpong asks for one send SGE; rxe takes the post of two and fails its completion
  // (measured), which the program reports.
  CHECK(run.report.at("verdict") == "detected");
  CHECK_THAT(run.report.at("first_error_line").get<std::string>(),
             Catch::Contains("parse WC failed"));
}

TEST_CASE("sut verbs: a QP asking more inline than the cap is refused with the device's errno",
          "[integration][verbs]") {
  TempDir dir;
  // UCT rc_verbs asks for 64 bytes of inline; the capped device allows 8.
  const SutRun run = client_under(dir, VerbsPair().ucx_perftest(), "kind=limits,max_inline_data=8");
  INFO(run.command.out);
  CHECK(run.report.at("verdict") == "detected");
  // The refusal; beside it, a create the device granted more than the cap is told the cap
  // (a `limits` fault with `lowered`, as every later query of that QP says too).
  std::vector<nlohmann::json> refusals;
  for (const auto& fault : run.events("fault"))
    if (fault.contains("field"))
      refusals.push_back(fault);
    else
      CHECK(fault.contains("lowered"));
  REQUIRE(refusals.size() == 1);
  const auto refusal = refusals[0];
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
      dir.path(), "--fault kind=limits,max_qp_wr=100 -- " +
                      std::string(FAULTLINE_SUT_VERBS_DLOPEN) + " " + device);
  INFO(run.command.out);
  // Its dlsym'd ibv_open_device was this library's, and so was its ibv_query_device: it was
  // shown the capped device.
  CHECK_THAT(run.output(), Catch::Contains(device + " max_qp_wr=100"));
  REQUIRE_FALSE(run.events("instrumented").empty());
  CHECK(run.events("instrumented")[0].at("call") == "ibv_open_device");
  // Shown a smaller device, it asked for nothing above it: it runs within these limits
  // (measured: called masked, "the fault fired").
  CHECK(run.report.at("verdict") == "pass");
  CHECK_THAT(run.report.at("evidence").get<std::string>(),
             Catch::Contains("runs within these limits"));
}
#endif

#ifdef FAULTLINE_SUT_VERBS_FLUSH
TEST_CASE("sut verbs: qp_error moves the QP to the error state and the device flushes the rest",
          "[integration][verbs]") {
  TempDir dir;
  const std::string device = faultline::testing::verbs_device().device;
  const std::string program =
      std::string(FAULTLINE_SUT_VERBS_FLUSH) + " " + device + " " + ipv4_gid_of(device) + " 20";
  const std::string fault = "--fault status=REM_ACCESS_ERR,side=recv,nth=3";
  // The status alone: the 17 receives after it stay posted (no more sends come).
  const SutRun status_only = faultline::testing::sut_exec(dir.path(), fault + " -- " + program);
  INFO(status_only.command.out);
  CHECK(status_only.report.at("verdict") == "detected");
  CHECK_THAT(status_only.output(), Catch::Contains("received 2 of 20, 0 flushed, 17 still posted"));
  // With qp_error the interposer moves B's QP to ERR: rxe itself completes the 17 as flushed.
  const SutRun to_error =
      faultline::testing::sut_exec(dir.path(), fault + ",qp_error=true -- " + program);
  INFO(to_error.command.out);
  CHECK(to_error.report.at("verdict") == "detected");
  CHECK_THAT(to_error.output(), Catch::Contains("received 2 of 20, 17 flushed, 0 still posted"));
  REQUIRE(to_error.events("fault").size() == 1);
  CHECK(to_error.events("fault")[0].at("qp_state") == "ERR");
}
#endif

#ifdef FAULTLINE_SUT_VERBS_REARM
TEST_CASE("sut verbs: a dropped completion hides none behind it from a program that re-arms",
          "[integration][verbs]") {
  TempDir dir;
  const std::string device = faultline::testing::verbs_device().device;
  const std::string program =
      std::string(FAULTLINE_SUT_VERBS_REARM) + " " + device + " " + ipv4_gid_of(device) + " 20";
  // Twenty send completions wait in the CQ; the third is lost. Read one at a time after an
  // event, the CQ re-armed (which raises no event for what it holds), the 17 behind it must
  // still come: a CQ that looked empty at the dropped one would leave the program at 2.
  const SutRun run = faultline::testing::sut_exec(
      dir.path(), "--fault kind=drop_completion,side=send,nth=3 -- " + program);
  INFO(run.command.out);
  CHECK_THAT(run.output(), Catch::Contains("send completions: 19 of 20"));
  CHECK(run.report.at("verdict") == "detected");
  REQUIRE(run.events("fault").size() == 1);
  // Without the fault, all 20.
  const SutRun clean = faultline::testing::sut_exec(dir.path(), "--ok 'of 20' -- " + program);
  CHECK_THAT(clean.output(), Catch::Contains("send completions: 20 of 20"));
}
#endif

TEST_CASE("sut verbs: inline off, force and above_limit reach perftest and rdma-core's pingpong",
          "[integration][verbs]") {
  TempDir dir;
  // ib_send_lat -I 64 posts its 2-byte sends inline from a registered buffer, on a device it
  // knows to have inline (rxe it does not: "Disabling it"; shown as an E810 here). Cleared,
  // each is read through its lkey and the run still completes (its result line is checked).
  const std::string send_lat = VerbsPair().send_lat() + " -I 64";
  const SutRun off = run_against(dir, send_lat,
                                 "--ok '^ *2 +50 ' --fault kind=limits,vendor_id=32902,"
                                 "vendor_part_id=5522 --fault kind=inline,mode=off -- " +
                                     send_lat + " 127.0.0.1");
  INFO(off.command.out);
  // Inline is how the bytes travel, not which: a correct program takes it, and conforms.
  CHECK(off.report.at("verdict") == "pass");
  CHECK_THAT(off.report.at("evidence").get<std::string>(),
             Catch::StartsWith("conforms") && Catch::Contains("executes no inline send"));
  CHECK_THAT(off.output(), !Catch::Contains("Disabling"));
  bool cleared = false;
  for (const auto& fault : off.events("fault"))
    cleared = cleared || fault.value("inline", "") == "cleared";
  CHECK(cleared);
  // ibv_rc_pingpong -s 64 posts inline when its QP has the room: given 256 bytes of it, it does.
  const std::string pingpong = VerbsPair().rc_pingpong("-s 64");
  const SutRun forced =
      run_against(dir, pingpong,
                  "--ok 'bytes in' --fault kind=inline,mode=force -- " + pingpong + " 127.0.0.1");
  INFO(forced.command.out);
  CHECK(forced.report.at("verdict") == "pass");
  REQUIRE_FALSE(forced.events("fault").empty());
  CHECK(forced.events("fault")[0].at("call") == "ibv_create_qp");
  CHECK(forced.events("fault")[0].at("inline_room")[1] >= 256);
  // The raised room reached its sends: it posted them inline itself.
  CHECK_FALSE(forced.events("inline_room_used").empty());
  // (ib_write_bw, whose 64 KiB writes fit no such room: scenarios/sut/ib-write-bw-inline-force.)
  // Above its QP's room (rxe grants no more than asked for), a 64-byte inline send is refused
  // by the provider itself, and the pingpong says so.
  const std::string above = VerbsPair().rc_pingpong("-s 64");
  const SutRun refused =
      run_against(dir, above, "--fault kind=inline,mode=above_limit -- " + above + " 127.0.0.1");
  INFO(refused.command.out);
  CHECK(refused.report.at("verdict") == "detected");
  CHECK(refused.report.at("exit_code") == 1);
  CHECK_THAT(refused.output(), Catch::Contains("Couldn't post send"));
  REQUIRE(refused.events("fault").size() == 1);
  CHECK(refused.events("fault")[0].at("inline") == "set");
}

#ifdef FAULTLINE_SUT_VERBS_SEGMENTS
TEST_CASE("sut verbs: a program's three-segment messages with a segment fewer, split or inline off",
          "[integration][verbs]") {
  TempDir dir;
  const std::string device = faultline::testing::verbs_device().device;
  const std::string program =
      std::string(FAULTLINE_SUT_VERBS_SEGMENTS) + " " + device + " " + ipv4_gid_of(device) + " 5";
  auto run = [&](const std::string& options) {
    return faultline::testing::sut_exec(dir.path(), options + " -- " + program);
  };
  const SutRun clean = run("--ok 'all checked'");
  INFO(clean.command.out);
  CHECK(clean.report.at("verdict") == "pass");
  // A sender building 2 of 3 segments: the receiver gets a short message and says so.
  const SutRun fewer = run("--fault kind=segment_count,mode=fewer,post=send,nth=3");
  INFO(fewer.command.out);
  CHECK(fewer.report.at("verdict") == "detected");
  CHECK_THAT(fewer.output(), Catch::Contains("message 2: 80 of 96 bytes arrived"));
  REQUIRE(fewer.events("fault").size() == 1);
  CHECK(fewer.events("fault")[0].at("segments") == nlohmann::json::array({3, 2}));
  // A receive with one SGE fewer has no room for the message: the device fails it (rxe: the
  // sender's completion says remote operation error, and the program reads that one first).
  const SutRun short_receive = run("--fault kind=segment_count,mode=fewer,post=recv,nth=1");
  INFO(short_receive.command.out);
  CHECK(short_receive.report.at("verdict") == "detected");
  CHECK_THAT(short_receive.output(),
             Catch::Contains("message 0: ") && Catch::Contains("completion error"));
  // The same 96 bytes in 4 SGEs, above the QP's max_send_sge of 3: the post is refused.
  const SutRun split = run("--fault kind=segment_count,mode=split,into=4,post=send,nth=1");
  INFO(split.command.out);
  CHECK(split.report.at("verdict") == "detected");
  CHECK_THAT(split.output(), Catch::Contains("ibv_post_send: Invalid argument"));
  // Its inline sends come from a stack buffer it never registered: without inline they cannot
  // be posted at all, and the post fails as on a NIC with a smaller inline cap.
  const SutRun off = faultline::testing::sut_exec(
      dir.path(), "--fault kind=inline,mode=off -- " + program + " inline");
  INFO(off.command.out);
  CHECK(off.report.at("verdict") == "detected");
  REQUIRE_FALSE(off.events("fault").empty());
  CHECK(off.events("fault")[0].at("unregistered") == true);
  CHECK_THAT(off.output(), Catch::Contains("ibv_post_send: Invalid argument"));
}
#endif
