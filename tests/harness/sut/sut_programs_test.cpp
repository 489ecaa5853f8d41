// The project's own systems under test on libfabric: one program in two builds, one that
// checks completion status and one that never does, under the same fault; and faults aimed at
// the utility provider (ofi_rxm) or its core (tcp) hitting exactly that layer's N-th completion.
#include <catch2/catch.hpp>
#include <chrono>

#ifdef FAULTLINE_SUT_OFI_SUM_CHECKED

#include "support/background_process.hpp"
#include "sut_runs.hpp"

using faultline::testing::SutRun;
using faultline::testing::TempDir;

namespace {

// `mode`: the program's second argument (small, inject: 48-byte messages).
SutRun run_sum(const TempDir& dir, const std::string& program, const std::string& fault,
               const std::string& mode = "") {
  return faultline::testing::sut_exec(
      dir.path(), "--ok " + faultline::testing::ofi_sum_line(mode.empty() ? 1024 : 48) +
                      (fault.empty() ? "" : " --fault " + fault) + " -- " + program +
                      (mode.empty() ? "" : " tcp " + mode));
}

}  // namespace

TEST_CASE("sut programs: the status-blind build computes garbage where the checking one stops",
          "[integration][ofi]") {
  TempDir dir;
  for (const char* program : {FAULTLINE_SUT_OFI_SUM_CHECKED, FAULTLINE_SUT_OFI_SUM_BLIND}) {
    const SutRun clean = run_sum(dir, program, "");
    INFO(clean.command.out);
    CHECK(clean.report.at("verdict") == "pass");
  }
  // The 3rd receive completes in error and its data never arrives (the buffer keeps what it
  // held when posted).
  const std::string fault = "status=REM_ACCESS_ERR,side=recv,nth=3,data=suppress";
  const SutRun checked = run_sum(dir, FAULTLINE_SUT_OFI_SUM_CHECKED, fault);
  INFO(checked.command.out);
  CHECK(checked.report.at("verdict") == "detected");
  CHECK_THAT(checked.report.at("first_error_line").get<std::string>(),
             Catch::Contains("completion error") && Catch::Contains("injected by faultline"));
  const SutRun blind = run_sum(dir, FAULTLINE_SUT_OFI_SUM_BLIND, fault);
  INFO(blind.command.out);
  CHECK(blind.report.at("verdict") == "silent-corruption");
  CHECK(blind.command.exit_code == 1);
  CHECK(blind.report.at("exit_code") == 0);
  const auto faults = blind.events("fault");
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].at("bytes_changed") == 1024);
  CHECK_THAT(blind.output(), !Catch::Contains(faultline::testing::ofi_sum_line()));
}

TEST_CASE("sut programs: a fault aimed at a provider layer hits that layer's N-th completion",
          "[integration][ofi]") {
  TempDir dir;
  // ofi_rxm is the layer the program reads: its 7th completion is the program's 7th.
  const SutRun rxm =
      run_sum(dir, FAULTLINE_SUT_OFI_SUM_CHECKED, "status=REM_ACCESS_ERR,layer=ofi_rxm,nth=7");
  INFO(rxm.command.out);
  REQUIRE(rxm.events("fault").size() == 1);
  CHECK(rxm.events("fault")[0].at("layer") == "ofi_rxm");
  CHECK(rxm.events("fault")[0].at("match") == 7);
  CHECK_THAT(rxm.report.at("first_error_line").get<std::string>(),
             Catch::Contains("at completion 7:"));
  // tcp is the core ofi_rxm reads inside the program's reads: its own 7th completion, counted
  // once although ofi_rxm reads its own CQ again inside its read.
  const SutRun tcp =
      run_sum(dir, FAULTLINE_SUT_OFI_SUM_CHECKED, "status=REM_ACCESS_ERR,layer=tcp,nth=7");
  INFO(tcp.command.out);
  REQUIRE(tcp.events("fault").size() == 1);
  CHECK(tcp.events("fault")[0].at("layer") == "tcp");
  CHECK(tcp.events("fault")[0].at("match") == 7);
  CHECK(tcp.report.at("verdict") == "detected");
  // The program's own CQ and endpoints are marked as its own; the core's are not.
  bool core_marked_own = false;
  for (const auto& event : tcp.events("instrumented"))
    if (event.value("layer", "") == "tcp" && event.value("programs_own", false))
      core_marked_own = true;
  CHECK_FALSE(core_marked_own);
}

TEST_CASE("sut programs: a failed post and a dropped completion reach an unmodified program",
          "[integration][ofi]") {
  TempDir dir;
  const SutRun post =
      run_sum(dir, FAULTLINE_SUT_OFI_SUM_CHECKED, "kind=fail_post,post=send,errno=12,nth=4");
  INFO(post.command.out);
  CHECK(post.report.at("verdict") == "detected");
  CHECK_THAT(post.output(), Catch::Contains("fi_send: Cannot allocate memory"));
  // A dropped completion: the program waits for one that never comes (a bounded spin here).
  const SutRun dropped =
      run_sum(dir, FAULTLINE_SUT_OFI_SUM_CHECKED, "kind=drop_completion,side=recv,nth=2");
  INFO(dropped.command.out);
  CHECK(dropped.events("fault").size() == 1);
  CHECK(dropped.report.at("verdict") == "detected");
  CHECK_THAT(dropped.output(), Catch::Contains("no completion"));
}

TEST_CASE(
    "sut exec: a program that stopped posting and completing, every thread asleep with no "
    "timeout, is a hang once quiet past --quiet-limit, long before its deadline",
    "[integration][ofi]") {
  TempDir dir;
  // A clean run under a plan (observe) says how long it ever went without either.
  const SutRun clean = run_sum(dir, FAULTLINE_SUT_OFI_SUM_CHECKED, "kind=observe");
  INFO(clean.command.out);
  CHECK(clean.report.at("verdict") == "pass");
  REQUIRE(clean.report.at("longest_quiet_ms").is_number());
  CHECK(clean.report.at("longest_quiet_ms").get<double>() >= 0);
  CHECK(clean.report.at("quiet") == false);
  // The program done, its shell then waits on a FIFO nobody writes (cat's open, the shell's
  // wait: neither with a timeout): a hang 1 s later, its deadline 120 s away.
  const auto started = std::chrono::steady_clock::now();
  const SutRun hung = faultline::testing::sut_exec(
      dir.path(), "--deadline 120 --quiet-limit 1 --fault kind=observe -- sh -c '" +
                      std::string(FAULTLINE_SUT_OFI_SUM_CHECKED) + " && mkfifo " + dir.path() +
                      "/fifo && cat " + dir.path() + "/fifo'");
  const auto took = std::chrono::steady_clock::now() - started;
  INFO(hung.command.out);
  CHECK(hung.report.at("verdict") == "hang");
  CHECK(hung.report.at("quiet") == true);
  CHECK_THAT(hung.report.at("evidence").get<std::string>(),
             Catch::Contains("no post or completion in its last 1000 ms and every thread asleep "
                             "with no timeout"));
  CHECK(took < std::chrono::seconds(60));
  // A dropped receive completion: the program polls its CQ for 5 s, then says so. Polling,
  // it may yet move on: detected, not a hang, however long it went without a completion.
  const SutRun polled = faultline::testing::sut_exec(
      dir.path(),
      "--deadline 120 --quiet-limit 1 --fault kind=drop_completion,side=recv,nth=2 -- " +
          std::string(FAULTLINE_SUT_OFI_SUM_CHECKED));
  INFO(polled.command.out);
  CHECK(polled.report.at("verdict") == "detected");
  CHECK(polled.report.at("longest_quiet_ms").get<double>() >= 4000);
  // No fault in its plan: the interposers count nothing, and the limit stops nothing.
  const SutRun unplanned = faultline::testing::sut_exec(
      dir.path(),
      "--quiet-limit 1 -- sh -c 'sleep 2; " + std::string(FAULTLINE_SUT_OFI_SUM_CHECKED) + "'");
  CHECK(unplanned.report.at("verdict") == "pass");
  CHECK(unplanned.report.at("longest_quiet_ms").is_null());
}

TEST_CASE(
    "sut programs: rewrite_field changes one field of the matching send, --with is no "
    "fault judged",
    "[integration][ofi]") {
  TempDir dir;
  // Message m's first byte is m * 7 + 1: only the 3rd message's holds 15, and becomes 14.
  const std::string field = "kind=rewrite_field,offset=0,width=1,minus_one=true,equals=15,nth=1";
  const SutRun rewritten = run_sum(dir, FAULTLINE_SUT_OFI_SUM_CHECKED, field);
  INFO(rewritten.command.out);
  CHECK(rewritten.report.at("verdict") == "silent-corruption");
  REQUIRE(rewritten.events("fault").size() == 1);
  const auto fault = rewritten.events("fault")[0];
  CHECK(fault.at("kind") == "rewrite_field");
  CHECK(fault.at("value") == nlohmann::json::array({15, 14}));
  CHECK(fault.at("call") == "fi_send");
  // The same fault standing (the run's condition): it fires alike, and the run is judged as
  // one without a fault: the sum is wrong, so it fails, with no fault counted.
  const SutRun standing = faultline::testing::sut_exec(
      dir.path(), "--ok " + faultline::testing::ofi_sum_line(1024) + " --with " + field + " -- " +
                      FAULTLINE_SUT_OFI_SUM_CHECKED);
  INFO(standing.command.out);
  CHECK(standing.events("fault").size() == 1);
  CHECK(standing.report.at("verdict") == "fail");
  CHECK(standing.report.at("faults_applied") == 0);
}

TEST_CASE("sut programs: a program leaving by _exit still leaves its call sites' map",
          "[integration][ofi]") {
  // A sweep's map is written as the program ends: at exit's handlers, and at _exit and _Exit,
  // which skip them (StepMesh's program leaves a hung Finalize so).
  TempDir dir;
  const SutRun mapped = faultline::testing::sut_exec(
      dir.path(), "--ok " + faultline::testing::ofi_sum_line(1024) +
                      " --fault kind=observe,sites=true -- " + FAULTLINE_SUT_OFI_SUM_CHECKED +
                      " tcp normal _exit");
  INFO(mapped.command.out);
  CHECK(mapped.report.at("verdict") == "pass");
  const auto sites = mapped.events("site");
  CHECK(sites.size() >= 2);  // its sends and its completions, at least
}

TEST_CASE("sut programs: inline on libfabric: injects sent, sends injected, injects above refused",
          "[integration][ofi]") {
  TempDir dir;
  // off: each 48-byte fi_inject goes out as an ordinary send of a copy; the hook takes its
  // completion out of the program's CQ (an inject has none), and the sum is right.
  const SutRun off = run_sum(dir, FAULTLINE_SUT_OFI_SUM_CHECKED, "kind=inline,mode=off", "inject");
  INFO(off.command.out);
  CHECK(off.report.at("verdict") == "pass");  // conforms: inline is not what it reads
  CHECK_THAT(off.report.at("evidence").get<std::string>(), Catch::StartsWith("conforms"));
  REQUIRE(off.events("fault").size() == 32);
  for (const auto& fault : off.events("fault")) {
    CHECK(fault.at("call") == "fi_inject");
    CHECK(fault.at("posted_as") == "fi_sendmsg");
    CHECK(fault.at("result") == 0);
  }
  // force: each 48-byte fi_send is within ofi_rxm's 64-byte inject size; it goes out as
  // fi_inject and the program still gets the completion its send owes it.
  const SutRun forced =
      run_sum(dir, FAULTLINE_SUT_OFI_SUM_CHECKED, "kind=inline,mode=force", "small");
  INFO(forced.command.out);
  CHECK(forced.report.at("verdict") == "pass");
  REQUIRE(forced.events("fault").size() == 32);
  CHECK(forced.events("fault")[0].at("call") == "fi_send");
  CHECK(forced.events("fault")[0].at("posted_as") == "fi_inject");
  // above_limit: each 1 KiB send posted as an inject, above the 64 bytes, is refused as a
  // provider refuses an inject above its size.
  const SutRun above = run_sum(dir, FAULTLINE_SUT_OFI_SUM_CHECKED, "kind=inline,mode=above_limit");
  INFO(above.command.out);
  CHECK(above.report.at("verdict") == "detected");
  CHECK_THAT(above.output(), Catch::Contains("fi_send: Invalid argument"));
}

TEST_CASE("sut programs: a program that sets its own FI_PROVIDER_PATH is still reached",
          "[integration][ofi]") {
  TempDir dir;
  // libfabric never finds the hook provider on this path; the preloaded fi_fabric wraps the
  // fabrics instead, the program's (ofi_rxm) and its core's (tcp).
  const SutRun checked =
      run_sum(dir, "env FI_PROVIDER_PATH=" + dir.path() + " " + FAULTLINE_SUT_OFI_SUM_CHECKED,
              "status=REM_ACCESS_ERR,side=recv,nth=3");
  INFO(checked.command.out);
  CHECK(checked.report.at("verdict") == "detected");
  std::vector<std::string> layers;
  for (const auto& event : checked.events("instrumented")) {
    if (event.at("object") != "fabric") continue;
    CHECK(event.at("through") == "LD_PRELOAD");
    layers.push_back(event.at("layer"));
  }
  CHECK_THAT(layers, Catch::UnorderedEquals(std::vector<std::string>{"tcp", "ofi_rxm"}));
  // Found by libfabric as usual, each fabric is wrapped once, by the hook.
  const SutRun hooked = run_sum(dir, FAULTLINE_SUT_OFI_SUM_CHECKED, "");
  const auto fabrics = hooked.events("instrumented");
  size_t count = 0;
  for (const auto& event : fabrics) {
    if (event.at("object") != "fabric") continue;
    ++count;
    CHECK(event.at("through") == "FI_HOOK");
  }
  CHECK(count == 2);
}

#endif  // FAULTLINE_SUT_OFI_SUM_CHECKED
