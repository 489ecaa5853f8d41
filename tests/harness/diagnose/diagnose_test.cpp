// faultline diagnose end to end: a healthy target passes every layer in under a minute; each
// injected fault is named by the right layer and probe; the StepMesh-on-Ascend story; a
// workload's formula against a device profile; usage errors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../harness_test_paths.hpp"
#include "faultline/harness/diagnose/diagnosis.hpp"
#include "support/background_process.hpp"
#include "support/local_port.hpp"
#include "support/run_command.hpp"

using faultline::testing::BackgroundProcess;
using faultline::testing::free_port;
using faultline::testing::read_text_file;
using faultline::testing::run_command;
using faultline::testing::TempDir;
using nlohmann::json;

namespace {

struct Diagnosed {
  json document;
  std::string progress;  ///< the per-layer lines (stderr under --json)
};

// Runs `faultline diagnose --json ARGS`, requires `exit_code`, and checks that the printed
// document conforms and is what diagnose.json holds.
Diagnosed diagnose(const std::string& args, int exit_code) {
  TempDir dir;
  auto run = run_command(kFaultline + " diagnose --json --report-dir " + dir.path() + " " + args);
  INFO(args << "\n" << run.out << run.err);
  REQUIRE(run.exit_code == exit_code);
  const json document = json::parse(run.out);
  CHECK(faultline::harness::diagnose::diagnose_schema_problems(document).empty());
  CHECK(json::parse(read_text_file(dir.path() + "/diagnose.json")) == document);
  CHECK_THAT(read_text_file(dir.path() + "/diagnose.md"), Catch::Contains("**Diagnosis:**"));
  return {document, run.err};
}

const json& probe_named(const json& document, const std::string& layer, const std::string& name) {
  for (const auto& each : document.at("layers")) {
    if (each.at("id") != layer) continue;
    for (const auto& probe : each.at("probes"))
      if (probe.at("name") == name) return probe;
  }
  FAIL("no probe " << name << " in " << layer);
  static const json none;
  return none;
}

Diagnosed check_every_layer_passes(const std::string& target) {
  const Diagnosed result = diagnose(target, 0);
  INFO(result.document.dump(2));
  for (const auto& layer : result.document.at("layers")) {
    CAPTURE(layer.at("id"));
    CHECK(layer.at("verdict") == "pass");
  }
  CHECK(result.document.at("layers").size() == 5);
  CHECK_FALSE(result.document.at("diagnosis").contains("layer"));
  return result;
}

}  // namespace

TEST_CASE("diagnose passes every layer on a healthy ofi tcp and shm", "[integration][ofi][slow]") {
  const Diagnosed tcp = check_every_layer_passes("--transport ofi --provider tcp");
  // L3's verbs-only probes are skipped on tcp: counted as skipped, not as passes missing.
  CHECK_THAT(tcp.progress, Catch::Contains("L3 error semantics") && Catch::Contains("skipped of"));
  check_every_layer_passes("--transport ofi --provider shm");
}

TEST_CASE("diagnose passes every layer on rxe", "[integration][verbs]") {
  check_every_layer_passes("--transport verbs");
}

TEST_CASE("inline forced above the limit is named in the data path, by an inline probe",
          "[integration][ofi]") {
  const json diagnosis = diagnose("--inject inline-above-limit", 1).document.at("diagnosis");
  INFO(diagnosis.dump(2));
  CHECK(diagnosis.at("layer") == "L2");
  CHECK_THAT(diagnosis.at("probe").get<std::string>(), Catch::Matches("SEND [0-9]+ B inline off"));
  CHECK_THAT(diagnosis.at("conclusion").get<std::string>(),
             Catch::Contains("inline payload of") && Catch::Contains("exceeds the granted"));
  CHECK_THAT(diagnosis.at("hint").get<std::string>(), Catch::Contains("forces inline"));
}

TEST_CASE("a completion status rewritten on writes is named in the data path, with the status",
          "[integration][ofi]") {
  const json diagnosis = diagnose("--inject write-status", 1).document.at("diagnosis");
  INFO(diagnosis.dump(2));
  CHECK(diagnosis.at("layer") == "L2");
  CHECK_THAT(diagnosis.at("probe").get<std::string>(), Catch::StartsWith("RDMA_WRITE "));
  CHECK_THAT(diagnosis.at("conclusion").get<std::string>(), Catch::Contains("REM_ACCESS_ERR"));
}

TEST_CASE("a send depth above a clamped max_qp_wr is named in the limits layer",
          "[integration][ofi]") {
  const json document = diagnose("--inject clamp-max-qp-wr", 1).document;
  const json& diagnosis = document.at("diagnosis");
  INFO(document.dump(2));
  CHECK(diagnosis.at("layer") == "L1");
  CHECK(diagnosis.at("probe") == "diagnosis workload fits");
  CHECK_THAT(diagnosis.at("conclusion").get<std::string>(),
             Catch::Contains("send_depth 128 exceeds device max_qp_wr 64"));
  // The bisection itself still finds what the device takes.
  CHECK(probe_named(document, "L1", "send depth").at("verdict") == "pass");
}

TEST_CASE("a PushRequest missing its lens segment is a kv contract violation, inline or not",
          "[integration][ofi][slow]") {
  const json document = diagnose("--inject kv-missing-lens", 1).document;
  const json& diagnosis = document.at("diagnosis");
  INFO(document.dump(2));
  CHECK(diagnosis.at("layer") == "L4");
  CHECK(diagnosis.at("probe") == "kv.push-pull");
  CHECK(probe_named(document, "L4", "kv.push-pull-inline-off").at("verdict") == "fail");
  CHECK_THAT(diagnosis.at("conclusion").get<std::string>(),
             Catch::Contains("segment count expected 3, actual 2") &&
                 Catch::Contains("inline makes no difference"));
}

TEST_CASE("the StepMesh story: the inline problem first, then how each kv run failed",
          "[integration][ofi][slow]") {
  // Both faults of the Ascend port: inline above what the NIC takes, and a PushRequest
  // without its lens segment. The lower layer is reported first.
  const json first =
      diagnose("--inject inline-above-limit --inject kv-missing-lens", 1).document.at("diagnosis");
  INFO(first.dump(2));
  CHECK(first.at("layer") == "L2");
  CHECK_THAT(first.at("probe").get<std::string>(), Catch::Contains("inline"));
  // The sender's wrong layout alone: with inline on it fails at the post (the inline announce
  // outgrew its plan), with inline off at the server's contract check. L4 compares how.
  const json second = diagnose("--inject kv-extra-segment", 1).document.at("diagnosis");
  INFO(second.dump(2));
  CHECK(second.at("layer") == "L4");
  CHECK(second.at("probe") == "kv.push-pull");
  CHECK_THAT(second.at("conclusion").get<std::string>(),
             Catch::Contains("80 bytes exceeds the granted max_inline 64") &&
                 Catch::Contains("PushRequest: segment count expected 3, actual 4") &&
                 Catch::Contains("the protocol contract, not inline"));
}

TEST_CASE("a workload formula given with --limits is checked against a device profile",
          "[integration][ofi]") {
  const json document =
      diagnose("--limits " FAULTLINE_TEST_DIAGNOSE_DIR "/deepep-limits.json", 1).document;
  const json& diagnosis = document.at("diagnosis");
  INFO(document.dump(2));
  CHECK(diagnosis.at("layer") == "L1");
  CHECK(diagnosis.at("probe") == "workload DeepEP hybrid-ep under Megatron-LM fits");
  CHECK_THAT(diagnosis.at("conclusion").get<std::string>(),
             Catch::Contains("send_depth 196609 (= 3 x max_tokens_per_rank 65536 + 1) exceeds "
                             "device max_qp_wr 65535"));
}

TEST_CASE("with --peer, L3 and L4 run against an agent that joins from elsewhere",
          "[integration][ofi][slow]") {
  TempDir dir;
  const int port = free_port();
  // The "remote" agent: started on its own, retrying until diagnose listens.
  BackgroundProcess remote("FAULTLINE_TOKEN=shared exec " + kFaultline +
                           " agent --coordinator 127.0.0.1:" + std::to_string(port) +
                           " --transport ofi --provider tcp --connect-timeout 60");
  auto run = run_command("FAULTLINE_TOKEN=shared " + kFaultline +
                         " diagnose --json --peer 127.0.0.1:" + std::to_string(port) +
                         " --report-dir " + dir.path());
  INFO(run.out << run.err << remote.err());
  REQUIRE(run.exit_code == 0);
  const json l4 = json::parse(read_text_file(dir.path() + "/L4/report.json"));
  std::vector<uint64_t> pids;
  for (const auto& agent : l4.at("run").at("agents")) pids.push_back(agent.at("pid"));
  CHECK(std::count(pids.begin(), pids.end(), static_cast<uint64_t>(remote.pid())) == 1);
  // The remote agent served L3 and L4 in one session, then was let go.
  CHECK(remote.wait(std::chrono::seconds(10)) == 0);

  auto no_token = run_command("env -u FAULTLINE_TOKEN " + kFaultline +
                              " diagnose --peer 127.0.0.1:" + std::to_string(port));
  CHECK(no_token.exit_code == 2);
  CHECK_THAT(no_token.err, Catch::Contains("needs FAULTLINE_TOKEN"));
}

TEST_CASE("diagnose usage errors name what was wrong and exit 2", "[integration][ofi]") {
  auto unknown_kind = run_command(kFaultline + " diagnose --inject gremlins");
  CHECK(unknown_kind.exit_code == 2);
  CHECK_THAT(unknown_kind.err, Catch::Contains("--inject gremlins: unknown fault kind; known: "
                                               "inline-above-limit"));
  auto unknown_device = run_command(kFaultline + " diagnose --device nonesuch");
  CHECK(unknown_device.exit_code == 2);
  CHECK_THAT(unknown_device.err, Catch::Contains("nonesuch") && Catch::Contains("lo"));
  // Still diagnosed: L0 runs and names what is missing (once a crash on a host with no verbs
  // device at all).
  CHECK_THAT(unknown_device.out,
             Catch::Contains("L0 environment") && Catch::Contains("first failure: device present"));
  auto no_verbs_device = run_command(kFaultline + " diagnose --transport verbs --device nonesuch0");
  INFO(no_verbs_device.out << no_verbs_device.err);
  CHECK(no_verbs_device.exit_code == 2);
  CHECK_THAT(no_verbs_device.out, Catch::Contains("kernel RDMA devices (/sys/class/infiniband)"));
  CHECK_THAT(no_verbs_device.out, Catch::Contains("hint: "));
  TempDir dir;
  std::ofstream(dir.path() + "/bad.json") << R"({"endpoint": {"send_depth": "2 * nope"}})";
  auto bad_limits = run_command(kFaultline + " diagnose --limits " + dir.path() + "/bad.json");
  CHECK(bad_limits.exit_code == 2);
  CHECK_THAT(bad_limits.err, Catch::Contains(dir.path() + "/bad.json: /endpoint/send_depth: "
                                                          "unknown input 'nope'"));
}

TEST_CASE("diagnose --limits --profile names the formula and each target's verdict",
          "[integration]") {
  const auto run = run_command(kFaultline + " diagnose --limits " + FAULTLINE_SOURCE_DIR +
                               "/examples/limits/deepep.json --profile hns_roce,mlx5-cx7");
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  for (const char* target : {"hns_roce-hip08", "hns_roce-hip09", "mlx5-cx7"}) {
    CHECK_THAT(run.out, Catch::Contains(std::string("  ") + target +
                                        ": refused: send_depth = 3 x max_tokens_per_rank 65536 "
                                        "+ 1 = 196609 > max_qp_wr 32768"));
  }
  CHECK_THAT(run.out,
             Catch::Contains("hns_roce-hip08: fits: recv_depth = 1024 <= max_recv_wr 32768"));
  // Dispatch and combine from one file: each endpoint's formula against each target.
  const auto both = run_command(kFaultline + " diagnose --limits " + FAULTLINE_SOURCE_DIR +
                                "/examples/limits/deepep-dispatch-combine.json --profile mlx5-cx7");
  INFO(both.out << both.err);
  CHECK(both.exit_code == 1);
  CHECK_THAT(both.out, Catch::Contains("mlx5-cx7: refused: dispatch.send_depth = 3 x "
                                       "max_tokens_per_rank 65536 + 1 = 196609 > max_qp_wr"));
  CHECK_THAT(both.out, Catch::Contains("mlx5-cx7: refused: combine.send_depth = 2 x "
                                       "max_tokens_per_rank 65536 + 1 = 131073 > max_qp_wr"));
  const auto unknown = run_command(kFaultline + " diagnose --limits " + FAULTLINE_SOURCE_DIR +
                                   "/examples/limits/deepep.json --profile cx9");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("present:"));
}
