// faultline port-check on the Soft-RoCE lane's rxe0: a program sizing its QP from DeepEP's
// formula held against every profile, one target enforced, an inline request, and faultline
// itself as the program.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "../harness_test_paths.hpp"
#include "faultline/harness/sut/sut_scenario.hpp"
#include "support/background_process.hpp"
#include "support/local_port.hpp"
#include "support/run_command.hpp"
#include "support/test_targets.hpp"

using faultline::testing::BackgroundProcess;
using faultline::testing::read_text_file;
using faultline::testing::run_command;
using faultline::testing::TempDir;
using nlohmann::json;

namespace {

// The report's verdict of each target ("port-check.NAME" -> pass, fail, skip).
std::map<std::string, std::string> verdicts(const std::string& dir) {
  std::map<std::string, std::string> found;
  const json report = json::parse(read_text_file(dir + "/report.json"));
  for (const auto& scenario : report.at("scenarios"))
    found[scenario.at("id").get<std::string>().substr(11)] = scenario.at("verdict");
  return found;
}

}  // namespace

#ifdef FAULTLINE_SUT_VERBS_DEEPEP_QP
TEST_CASE("port-check holds DeepEP's send depth against every target", "[integration][verbs]") {
  TempDir dir;
  const std::string device = faultline::testing::verbs_device().device;
  const std::string program = std::string(FAULTLINE_SUT_VERBS_DEEPEP_QP) + " " + device;
  // 65536 tokens: 196609 send WRs. rxe grants them here; the hardware targets would not.
  const auto large = run_command(kFaultline + " port-check --profile all --report-dir " +
                                 dir.path() + "/large -- " + program + " 65536");
  INFO(large.out << large.err);
  CHECK(large.exit_code == 1);
  CHECK_THAT(large.out, Catch::Contains("program: pass here"));
  CHECK_THAT(large.out, Catch::Contains("ibv_create_qp max_send_wr 196609 > max_qp_wr 32768: "
                                        "ibv_create_qp fails with EINVAL"));
  CHECK_THAT(large.out, Catch::Contains("max_qp_wr 4063"));  // irdma-e810
  // Where in the program: addr2line's function and line of the first frame.
  CHECK_THAT(large.out, Catch::Contains("at main at ") && Catch::Contains("verbs_deepep_qp.c:"));
  auto found = verdicts(dir.path() + "/large");
  CHECK(found.at("hns_roce-hip08") == "fail");
  CHECK(found.at("mlx5-cx7") == "fail");
  CHECK(found.at("efa") == "fail");
  CHECK(found.at("rxe-linux-6.1") == "pass");
  CHECK(found.at("bnxt_re-thor") == "skip");  // firmware-reported depth: unknown
  // 1024 tokens: 3073 fits every target that knows its max_qp_wr.
  const auto small = run_command(kFaultline + " port-check --profile all --report-dir " +
                                 dir.path() + "/small -- " + program + " 1024");
  INFO(small.out << small.err);
  CHECK(small.exit_code == 0);
  for (const auto& [target, verdict] : verdicts(dir.path() + "/small")) {
    INFO(target);
    CHECK(verdict != "fail");
  }
  // Enforced: the program's own ibv_create_qp fails with the target driver's errno.
  for (const auto& [target, text] : {std::pair{"hns_roce-hip08", "Invalid argument (errno 22)"},
                                     std::pair{"mlx5-cx5", "Cannot allocate memory (errno 12)"}}) {
    const auto enforced =
        run_command(kFaultline + " port-check --profile " + target + " --enforce " + target +
                    " --report-dir " + dir.path() + "/enforced -- " + program + " 65536");
    INFO(enforced.out << enforced.err);
    CHECK(enforced.exit_code == 1);
    const json run = json::parse(read_text_file(dir.path() + "/enforced/program/sut.json"));
    std::string output;
    for (const auto& line : run.at("output")) output += line.get<std::string>() + "\n";
    CHECK_THAT(output,
               Catch::Contains("ibv_create_qp max_send_wr 196609") && Catch::Contains(text));
  }
}
#endif

#ifdef FAULTLINE_SUT_VERBS_FLUSH
// perftest asks no inline at all on rxe (ib_send_lat -I 256 creates its QP with
// max_inline_data 0 here, measured), so a program of the project's own sends inline.
TEST_CASE("port-check names an inline request above a target's inline limit",
          "[integration][verbs]") {
  TempDir dir;
  const std::string device = faultline::testing::verbs_device().device;
  const std::string gid = faultline::harness::sut::ipv4_gid_index(device);
  const std::string program =
      std::string(FAULTLINE_SUT_VERBS_FLUSH) + " " + device + " " + gid + " 4 256";
  const auto checked = run_command(kFaultline +
                                   " port-check --profile irdma-e810,hns_roce-hip08 "
                                   "--deadline 30 --report-dir " +
                                   dir.path() + " -- " + program);
  INFO(checked.out << checked.err);
  CHECK(checked.exit_code == 1);
  // irdma refuses the QP; hns grants 32 bytes and refuses the 256-byte inline post.
  CHECK_THAT(checked.out,
             Catch::Contains("ibv_create_qp max_inline_data 256 > max_inline_data 101"));
  CHECK_THAT(checked.out, Catch::Contains("ibv_post_send inline_bytes 256 > max_inline_data 32"));
  // Enforced, hns's clamp: the create succeeds, the program's own post fails with EINVAL.
  const auto enforced = run_command(kFaultline +
                                    " port-check --profile hns_roce-hip08 --enforce "
                                    "hns_roce-hip08 --report-dir " +
                                    dir.path() + "/hns -- " + program);
  INFO(enforced.out << enforced.err);
  CHECK_THAT(read_text_file(dir.path() + "/hns/program/sut.json"),
             Catch::Contains("ibv_post_send: Invalid argument"));
}
#endif

// perftest picks its inline size by the device's vendor ids and asks none of a device it does
// not know (rxe: "Device not recognized to implement inline feature"). Enforced, the program
// sees the target's ids as well as its limits: shown an E810, ib_send_lat -I 256 asks 256
// bytes inline, as it would there, and irdma refuses the QP.
TEST_CASE("port-check --enforce shows perftest the device it is ported to",
          "[integration][verbs]") {
  TempDir dir;
  const std::string device = faultline::testing::verbs_device().device;
  const std::string lat = "ib_send_lat -d " + device + " -x " +
                          faultline::harness::sut::ipv4_gid_index(device) + " -I 256 -n 20 -p " +
                          std::to_string(faultline::testing::free_port());
  BackgroundProcess server("exec " + lat);
  REQUIRE_FALSE(server.wait(std::chrono::milliseconds(800)).has_value());
  const auto checked = run_command(kFaultline +
                                   " port-check --profile irdma-e810,mlx5-cx5 --enforce "
                                   "irdma-e810 --deadline 30 --report-dir " +
                                   dir.path() + " -- " + lat + " 127.0.0.1");
  INFO(checked.out << checked.err);
  CHECK(checked.exit_code == 1);
  CHECK_THAT(checked.out,
             Catch::Contains("ibv_create_qp max_inline_data 256 > max_inline_data 101"));
  const auto found = verdicts(dir.path());
  CHECK(found.at("irdma-e810") == "fail");
  CHECK(found.at("mlx5-cx5") == "pass");  // 1004 bytes inline
  const json run = json::parse(read_text_file(dir.path() + "/program/sut.json"));
  CHECK_THAT(run.at("output").dump(), !Catch::Contains("Device not recognized"));
  bool shown_as_e810 = false;  // rxe's vendor 0xffffff, shown as Intel's 0x8086
  for (const auto& event : run.at("events"))
    shown_as_e810 =
        shown_as_e810 || event.value("lowered", json::object()).value("vendor_id", json()) ==
                             json::array({0xffffff, 0x8086});
  CHECK(shown_as_e810);
}

TEST_CASE("port-check runs faultline itself against every profile", "[integration][verbs]") {
  TempDir dir;
  const std::string device = faultline::testing::verbs_device().device;
  const auto checked = run_command(kFaultline +
                                   " port-check --profile all --deadline 120 "
                                   "--report-dir " +
                                   dir.path() + " -- " + kFaultline +
                                   " run --suite smoke --transport verbs --device " + device +
                                   " --report-dir " + dir.path() + "/smoke");
  INFO(checked.out << checked.err);
  CHECK((checked.exit_code == 0 || checked.exit_code == 1));
  // How faultline's own run went here is its business (its verdicts are in smoke/); what it
  // asked of the device is held against every target.
  CHECK_THAT(checked.out,
             Catch::Contains("program: ") && Catch::Contains("resource request(s) seen"));
  const auto found = verdicts(dir.path());
  CHECK(found.size() >= 12);
  CHECK(found.count("hns_roce-hip08") == 1);
  CHECK_THAT(read_text_file(dir.path() + "/summary.md"), Catch::Contains("port-check.mlx5-cx7"));
}

TEST_CASE("port-check with a --profile that names nothing checks nothing and says so",
          "[integration]") {
  TempDir dir;
  const std::string marker = dir.path() + "/ran";
  for (const char* names : {"", ","}) {
    const auto run = run_command(kFaultline + " port-check --profile '" + names +
                                 "' --report-dir " + dir.path() + " -- touch " + marker);
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Catch::Contains("names no profile: nothing would be checked"));
    CHECK_FALSE(std::filesystem::exists(marker));
  }
}
