// The device profile library (scenarios/devices/): every profile conforms to its schema and
// every value it holds has a source; profiles are selected by name or prefix; and a program's
// requests are held against each target as port-check does.
#include "faultline/harness/devices/device_profiles.hpp"

#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include "faultline/harness/diagnose/workload_targets.hpp"
#include "faultline/harness/port_check/port_check.hpp"
#include "faultline/transports/fault/fault_spec.hpp"
#include "support/background_process.hpp"

using faultline::harness::DeviceProfile;
using faultline::harness::load_device_profile;
using faultline::harness::select_device_profiles;
using nlohmann::json;

namespace {

const std::string kLibrary = std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/devices";

DeviceProfile profile(const std::string& name) {
  auto loaded = load_device_profile(kLibrary + "/" + name + ".json");
  REQUIRE(loaded.ok());
  return loaded.value();
}

// A request as the verbs interposer logs it under observe.
json qp_request(uint64_t send_wr, uint64_t inline_data = 0) {
  return {{"event", "request"},
          {"call", "ibv_create_qp"},
          {"asked",
           {{"max_send_wr", send_wr},
            {"max_recv_wr", 16},
            {"max_send_sge", 1},
            {"max_recv_sge", 1},
            {"max_inline_data", inline_data}}},
          {"stack", {"./prog(main)+0x4d"}}};
}

}  // namespace

TEST_CASE("every profile of the library conforms and names a source for each value", "[unit]") {
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kLibrary)) {
    if (entry.path().extension() != ".json") continue;  // the README
    INFO(entry.path());
    auto loaded = load_device_profile(entry.path().string());
    if (!loaded.ok()) FAIL(loaded.error().describe());
    CHECK(loaded->document.at("name") == loaded->name);
    for (const auto& [limit, value] : loaded->limits) CHECK_FALSE(loaded->source_of(limit).empty());
    ++count;
  }
  CHECK(count >= 13);
  // Each target a port is made to has its profile.
  for (const char* name :
       {"mlx5-cx5", "mlx5-cx6dx", "mlx5-cx7", "hns_roce-hip08", "hns_roce-hip09", "bnxt_re-thor",
        "irdma-e810", "efa", "erdma", "qedr", "rxe-linux-6.1", "siw"})
    CHECK(std::filesystem::exists(kLibrary + "/" + name + ".json"));
}

TEST_CASE("a profile value without a source, or a guessed field, is refused by name", "[unit]") {
  faultline::testing::TempDir dir;
  json document = profile("siw").document;
  document["sources"].erase("max_cqe");
  std::ofstream(dir.path() + "/siw.json") << document.dump();
  auto missing = load_device_profile(dir.path() + "/siw.json");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains("/sources/max_cqe"));
  document = profile("siw").document;
  document["limits"]["max_ah"] = 5;  // not a limit faultline knows
  std::ofstream(dir.path() + "/odd.json") << document.dump();
  auto odd = load_device_profile(dir.path() + "/odd.json");
  REQUIRE_FALSE(odd.ok());
  CHECK_THAT(odd.error().message, Catch::Contains("odd.json") && Catch::Contains("/limits"));
  // A count known only from below is {"at_least": N}, nothing else.
  for (const json& bound :
       {json{{"at_least", -1}}, json{{"at_least", 4}, {"at_most", 8}}, json{{"least", 4}}}) {
    INFO(bound.dump());
    document = profile("siw").document;
    document["limits"]["max_qp"] = bound;
    std::ofstream(dir.path() + "/bound.json") << document.dump();
    auto refused = load_device_profile(dir.path() + "/bound.json");
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message,
               Catch::Contains("/limits/max_qp") && Catch::Contains("{\"at_least\": N}"));
  }
}

TEST_CASE("profiles are chosen by name, by prefix, or all, and an unknown one lists those present",
          "[unit]") {
  auto mlx5 = select_device_profiles("mlx5,hns_roce-hip08", kLibrary);
  REQUIRE(mlx5.ok());
  CHECK(mlx5->size() == 4);
  // A profile's own name is that one profile, though another's name begins with it.
  auto e810 = select_device_profiles("irdma-e810", kLibrary);
  REQUIRE(e810.ok());
  REQUIRE(e810->size() == 1);
  CHECK(e810->front().name == "irdma-e810");
  auto irdma = select_device_profiles("irdma", kLibrary);
  REQUIRE(irdma.ok());
  CHECK(irdma->size() == 2);  // RoCE and iWARP
  auto all = select_device_profiles("all", kLibrary);
  REQUIRE(all.ok());
  for (const auto& chosen : all.value()) CHECK(chosen.document.at("transport") == "verbs");
  auto unknown = select_device_profiles("cx9", kLibrary);
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.error().message, Catch::Contains("cx9") && Catch::Contains("mlx5-cx7"));
}

TEST_CASE("DeepEP's send depth is refused by every hardware profile that knows max_qp_wr",
          "[unit]") {
  using faultline::harness::port_check::judge_target;
  const std::vector<json> requests = {qp_request(3 * 65536 + 1)};
  const auto hns = judge_target(requests, profile("hns_roce-hip08"));
  CHECK(hns.verdict == "would-fail");
  REQUIRE(hns.refusals.size() == 1);
  CHECK(hns.refusals[0].field == "max_send_wr");
  CHECK(hns.refusals[0].asked == 196609);
  CHECK(hns.refusals[0].allowed == 32768);
  CHECK_THAT(hns.refusals[0].how, Catch::Contains("EINVAL"));
  CHECK(judge_target(requests, profile("mlx5-cx7")).refusals.at(0).how ==
        "ibv_create_qp fails with ENOMEM");
  CHECK(judge_target(requests, profile("rxe-linux-6.1")).verdict == "runs");
  // bnxt_re's depth comes from firmware: not known, so not claimed either way.
  const auto bnxt = judge_target(requests, profile("bnxt_re-thor"));
  CHECK(bnxt.verdict == "unknown");
  CHECK(bnxt.unknown == std::vector<std::string>{"max_qp_wr", "max_recv_wr"});
  // 1024 tokens: depth 3073 fits every profile that knows the limit.
  for (const char* name : {"mlx5-cx5", "hns_roce-hip09", "irdma-e810", "efa", "qedr", "siw"})
    CHECK(judge_target({qp_request(3073)}, profile(name)).verdict == "runs");
}

TEST_CASE(
    "a path MTU of 1024 (Gloo's) is cleared for hns, irdma, qedr and siw by their drivers' max_mtu",
    "[unit]") {
  using faultline::harness::port_check::judge_target;
  const std::vector<json> modify = {
      {{"call", "ibv_modify_qp"}, {"asked", {{"path_mtu", 1024}, {"qp_num", 17}}}}};
  for (const char* name : {"hns_roce-hip08", "hns_roce-hip09", "irdma-e810", "qedr", "siw"}) {
    INFO(name);
    const auto outcome = judge_target(modify, profile(name));
    CHECK(outcome.verdict == "runs");
    CHECK(outcome.unknown.empty());
    CHECK_THAT(profile(name).source_of("max_mtu"), Catch::Contains("IB_MTU_4096"));
  }
  // Above the largest MTU a driver grants: refused by the modify.
  const std::vector<json> jumbo = {
      {{"call", "ibv_modify_qp"}, {"asked", {{"path_mtu", 8192}, {"qp_num", 17}}}}};
  const auto hns = judge_target(jumbo, profile("hns_roce-hip09"));
  REQUIRE(hns.refusals.size() == 1);
  CHECK(hns.refusals[0].limit == "max_mtu");
}

TEST_CASE("a QP type a target has none of is the first call that fails there, each finding once",
          "[unit]") {
  using faultline::harness::port_check::judge_target;
  json rc = qp_request(16);
  rc["asked"]["qp_type"] = "RC";
  json modify = {{"call", "ibv_modify_qp"},
                 {"asked", {{"max_rd_atomic", 1}, {"qp_num", 17}}},
                 {"stack", {"./prog(connect)+0x10"}}};
  json again = modify;
  again["stack"] = {"./prog(reconnect)+0x22"};
  const std::vector<json> requests = {rc, modify, modify, again};
  // EFA has no RC queue pairs: the create is what fails, named first with its source.
  const auto efa = judge_target(requests, profile("efa"));
  CHECK(efa.verdict == "would-fail");
  REQUIRE_FALSE(efa.refusals.empty());
  CHECK(efa.refusals[0].what == "qp_type RC");
  CHECK_THAT(efa.refusals[0].how, Catch::Contains("efa has no RC queue pairs"));
  CHECK_THAT(efa.refusals[0].source, Catch::Contains("efa_qp_validate_attr"));
  // Three modifies asking one read depth EFA does not grant: one finding, counted, both sites.
  REQUIRE(efa.refusals.size() == 2);
  CHECK(efa.refusals[1].count == 3);
  CHECK(efa.refusals[1].sites == json::array({"./prog(reconnect)+0x22"}));
  CHECK_THAT(faultline::harness::port_check::finding_line(efa.refusals[1]),
             Catch::EndsWith("(3 times)"));
  // A finding first made without a stack keeps the later one's site.
  json bare = modify;
  bare.erase("stack");
  const auto grouped = judge_target({bare, modify}, profile("efa"));
  REQUIRE(grouped.refusals.size() == 1);
  CHECK(grouped.refusals[0].count == 2);
  CHECK(grouped.refusals[0].sites == json::array({"./prog(connect)+0x10"}));
  // hns HIP08 creates RC; UD from user space only after HIP08; XRC is not known.
  CHECK(judge_target({rc}, profile("hns_roce-hip08")).verdict == "runs");
  json ud = rc;
  ud["asked"]["qp_type"] = "UD";
  CHECK(judge_target({ud}, profile("hns_roce-hip08")).verdict == "would-fail");
  CHECK(judge_target({ud}, profile("hns_roce-hip09")).verdict == "runs");
  json xrc = rc;
  xrc["asked"]["qp_type"] = "XRC";
  const auto hns = judge_target({xrc}, profile("hns_roce-hip08"));
  CHECK(hns.verdict == "unknown");
  CHECK(hns.unknown == std::vector<std::string>{"qp_types.XRC"});
  // A profile that says nothing of types says so.
  DeviceProfile silent = profile("hns_roce-hip08");
  silent.supports.erase("qp_types");
  CHECK(judge_target({rc}, silent).unknown == std::vector<std::string>{"qp_types"});
}

TEST_CASE("RDMA write with immediate fails on siw, runs on hns and irdma, is unknown where unsaid",
          "[unit]") {
  using faultline::harness::port_check::judge_target;
  const std::vector<json> posts = {{{"call", "ibv_post_send"},
                                    {"asked", {{"opcode", "RDMA_WRITE_WITH_IMM"}, {"qp_num", 17}}},
                                    {"stack", {"./prog(send+0xdb)"}}}};
  const auto siw = judge_target(posts, profile("siw"));
  REQUIRE(siw.refusals.size() == 1);
  CHECK(siw.refusals[0].what == "opcode RDMA_WRITE_WITH_IMM");
  CHECK_THAT(siw.refusals[0].source, Catch::Contains("map_send_opcode"));
  CHECK(judge_target(posts, profile("hns_roce-hip08")).verdict == "runs");
  CHECK(judge_target(posts, profile("qedr")).unknown == std::vector<std::string>{"operations"});
  // irdma's RoCE and iWARP QPs both write with immediate (their qp_caps).
  CHECK(judge_target(posts, profile("irdma-e810")).verdict == "runs");
  CHECK(judge_target(posts, profile("irdma-e810-iwarp")).verdict == "runs");
}

TEST_CASE("an inline request above hns's cap is clamped at create and refused at the post",
          "[unit]") {
  using faultline::harness::port_check::judge_target;
  const std::vector<json> create = {qp_request(64, 256)};
  CHECK(judge_target(create, profile("hns_roce-hip08")).verdict == "runs");
  const auto irdma = judge_target(create, profile("irdma-e810"));
  REQUIRE(irdma.refusals.size() == 1);
  CHECK(irdma.refusals[0].field == "max_inline_data");
  const std::vector<json> posted = {
      qp_request(64, 256),
      {{"call", "ibv_post_send"}, {"asked", {{"inline_bytes", 256}, {"qp_num", 17}}}}};
  const auto hns = judge_target(posted, profile("hns_roce-hip08"));
  REQUIRE(hns.refusals.size() == 1);
  CHECK(hns.refusals[0].call == "ibv_post_send");
  CHECK(hns.refusals[0].allowed == 32);
}

TEST_CASE("SRQ depth, read/atomic depth, remote atomics and MR size are held against targets",
          "[unit]") {
  using faultline::harness::port_check::judge_target;
  const std::vector<json> requests = {
      {{"call", "ibv_create_srq"}, {"asked", {{"max_wr", 65536}, {"max_sge", 4}}}},
      {{"call", "ibv_modify_qp"},
       {"asked", {{"path_mtu", 4096}, {"max_dest_rd_atomic", 16}, {"atomic", 1}}}},
      {{"call", "ibv_reg_mr"}, {"asked", {{"length", uint64_t{1} << 46}}}}};
  // hns: an SRQ above 32768 WRs; atomics and MTU unknown there.
  const auto hns = judge_target(requests, profile("hns_roce-hip08"));
  REQUIRE(hns.refusals.size() == 1);
  CHECK(hns.refusals[0].call == "ibv_create_srq");
  CHECK(hns.refusals[0].allowed == 32768);
  // E810 (measured): 8 reads in flight, no atomics, 32 TiB memory regions.
  const auto irdma = judge_target(requests, profile("irdma-e810"));
  std::vector<std::string> limits;
  for (const auto& refusal : irdma.refusals) limits.push_back(refusal.limit);
  CHECK(limits == std::vector<std::string>{"max_qp_rd_atom", "atomic_cap", "max_mr_size"});
  CHECK(irdma.refusals[1].how == "the target has no atomics (atomic_cap NONE)");
  CHECK(judge_target(requests, profile("rxe-linux-6.1")).verdict == "runs");
}

TEST_CASE("an enforced profile carries its caps and the device identity it shows", "[unit]") {
  const json fault = profile("irdma-e810").limits_fault();
  CHECK(fault.at("max_inline_data") == 101);
  CHECK(fault.at("max_qp_rd_atom") == 8);
  CHECK(fault.at("atomic_cap") == 0);
  CHECK(fault.at("max_mr_size") == uint64_t{35184372088832});
  CHECK(fault.at("vendor_id") == 0x8086);
  CHECK(fault.at("vendor_part_id") == 5522);
  CHECK(fault.at("max_qp") == 4092);  // how many it holds: enforced too
  CHECK(fault.at("max_srq") == 0);
  CHECK_FALSE(profile("siw").limits_fault().contains("vendor_id"));  // no public id
  // A count known only from below shows the program that bound: the least the device grants.
  CHECK(profile("hns_roce-hip09").limits_fault().at("max_qp") == 4096);
}

TEST_CASE("how many objects a program holds at once is held against each target's counts",
          "[unit]") {
  using faultline::harness::port_check::judge_target;
  auto held = [](const char* call, uint64_t count, const char* site) {
    return json{{"call", call}, {"asked", {{"held", count}}}, {"stack", {site}}};
  };
  // An E810 holds 4092 QPs (measured): 4096 QPs at once fail there, one finding with the most
  // the program held; its SRQs (none there) likewise.
  const std::vector<json> qps = {held("ibv_create_qp", 16, "./prog(a+0x1)"),
                                 held("ibv_create_qp", 4096, "./prog(b+0x2)"),
                                 held("ibv_create_qp_ex", 8192, "./prog(c+0x3)")};
  const auto irdma = judge_target(qps, profile("irdma-e810"));
  CHECK(irdma.verdict == "would-fail");
  REQUIRE(irdma.refusals.size() == 1);
  CHECK(irdma.refusals[0].what == "held 8192 > max_qp 4092");
  CHECK_THAT(irdma.refusals[0].how, Catch::Contains("one more than the target holds"));
  CHECK(judge_target({held("ibv_create_srq", 1, "./prog(d+0x4)")}, profile("irdma-e810")).verdict ==
        "would-fail");
  CHECK(judge_target(qps, profile("mlx5-cx5")).verdict == "runs");  // 262144
  // hns takes its counts from the firmware, known only from below (its driver's defaults
  // before): a program under every bound clears it; one above is unknown, naming the count.
  CHECK(
      judge_target({held("ibv_alloc_pd", 1, "./prog(e+0x5)")}, profile("hns_roce-hip09")).verdict ==
      "runs");
  auto more = qps;
  more.push_back(held("ibv_create_qp", 5000, "./prog(f+0x6)"));
  const auto hns = judge_target(more, profile("hns_roce-hip09"));
  CHECK(hns.verdict == "unknown");
  CHECK(hns.unknown ==
        std::vector<std::string>{"max_qp (held 8192, known only to be at least 4096)"});
}

TEST_CASE(
    "an enforced profile refuses the QP types and opcodes its driver has not, with its "
    "errno",
    "[unit]") {
  // EFA: UD and its own SRD only, any other type EOPNOTSUPP.
  const json efa = profile("efa").limits_fault();
  CHECK(efa.at("refuse_qp_types") ==
        json{{"names", {"RAW_PACKET", "RC", "UC", "XRC"}}, {"errno", EOPNOTSUPP}});
  CHECK_FALSE(efa.contains("refuse_operations"));  // not known: nothing refused
  // siw: RC only, and no immediate data (ibv_post_send EINVAL).
  const json siw = profile("siw").limits_fault();
  CHECK(siw.at("refuse_operations") ==
        json{{"names", {"RDMA_WRITE_WITH_IMM", "SEND_WITH_IMM"}}, {"errno", EINVAL}});
  // irdma in iWARP mode writes with immediate but sends none; in RoCE mode both.
  CHECK(profile("irdma-e810-iwarp").limits_fault().at("refuse_operations") ==
        json{{"names", {"SEND_WITH_IMM"}}, {"errno", EINVAL}});
  CHECK_FALSE(profile("irdma-e810").limits_fault().contains("refuse_operations"));
  CHECK_FALSE(profile("mlx5-cx5").limits_fault().contains("refuse_qp_types"));
  // The plan parses as the interposers take it.
  for (const char* name : {"efa", "siw", "irdma-e810-iwarp", "hns_roce-hip08"}) {
    CAPTURE(name);
    auto parsed = faultline::transports::fault::parse_fault(
        profile(name).limits_fault(), faultline::transports::fault::kInterposer, name);
    CHECK(parsed.ok());
  }
}

TEST_CASE("a workload's formulas are held against each target", "[unit]") {
  auto workload = faultline::harness::diagnose::load_workload(std::string(FAULTLINE_SOURCE_DIR) +
                                                              "/examples/limits/deepep.json");
  REQUIRE(workload.ok());
  const auto checks = faultline::harness::diagnose::check_workload_against(
      workload.value(), {profile("hns_roce-hip08"), profile("bnxt_re-thor")});
  REQUIRE(checks.size() == 6);  // send_depth, recv_depth, max_send_sge for each
  CHECK(checks[0].target == "hns_roce-hip08");
  CHECK(checks[0].field == "send_depth");
  CHECK(checks[0].derivation == "3 x max_tokens_per_rank 65536 + 1");
  CHECK(checks[0].value == 196609);
  CHECK(checks[0].verdict == "refused");
  CHECK(checks[1].verdict == "fits");  // recv_depth 1024 against max_recv_wr 32768
  CHECK(checks[3].target == "bnxt_re-thor");
  CHECK(checks[3].verdict == "unknown");
}
