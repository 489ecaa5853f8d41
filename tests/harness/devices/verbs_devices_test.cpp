// `faultline devices` and device selection on a real verbs device (the Soft-RoCE lane's rxe0).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../harness_test_paths.hpp"
#include "faultline/transports/registry.hpp"
#include "support/background_process.hpp"
#include "support/run_command.hpp"
#include "support/test_targets.hpp"

using faultline::testing::run_command;
using faultline::testing::verbs_device;

TEST_CASE("devices --transport verbs --json lists the verbs device with its limits and GIDs",
          "[integration][verbs]") {
  const std::string device = verbs_device().device;
  REQUIRE_FALSE(device.empty());  // the lane sets FAULTLINE_VERBS_DEVICE
  auto result = run_command(kFaultline + " devices --transport verbs --json");
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const auto document = nlohmann::json::parse(result.out);
  const nlohmann::json* found = nullptr;
  for (const auto& entry : document.at("devices")) {
    if (entry.at("name") == device) found = &entry;
  }
  REQUIRE(found != nullptr);
  const auto& limits = found->at("limits");
  CHECK(found->at("state") == "active");
  CHECK(found->at("link_layer") == "Ethernet");
  for (const char* key : {"max_qp_wr", "max_cqe", "max_send_sge", "max_sge_rd", "max_inline_data",
                          "active_mtu", "max_mtu", "max_mr_size"}) {
    CAPTURE(key);
    CHECK(limits.at(key).get<uint64_t>() > 0);
  }
  REQUIRE_FALSE(found->at("gids").empty());
  CHECK_THAT(found->at("gid_choice").get<std::string>(), Catch::Contains("RoCE v2 IPv4-mapped"));
}

TEST_CASE("opening an unknown verbs device names the devices present", "[integration][verbs]") {
  auto transport = faultline::transports::find_transport("verbs");
  REQUIRE(transport.ok());
  auto device = transport.value()->open({"", "nosuch0"});
  REQUIRE_FALSE(device.ok());
  CHECK(device.error().code == faultline::ErrorCode::kNotFound);
  CHECK_THAT(
      device.error().message,
      Catch::Contains("unknown verbs device 'nosuch0'; devices present: " + verbs_device().device));
}

TEST_CASE("a GID index the port does not have is refused by number", "[integration][verbs]") {
  auto transport = faultline::transports::find_transport("verbs");
  REQUIRE(transport.ok());
  faultline::transports::DeviceSelector selector;
  selector.device = verbs_device().device;
  selector.gid_index = 200;
  auto device = transport.value()->open(selector);
  REQUIRE_FALSE(device.ok());
  INFO(device.error().describe_with_hint());
  CHECK_THAT(device.error().message, Catch::Contains("has no valid GID at index 200"));
}

TEST_CASE(
    "a verbs agent without --device takes the RDMA device on the interface toward its "
    "coordinator",
    "[integration][verbs]") {
  const std::string device = verbs_device().device;
  REQUIRE_FALSE(device.empty());
  // The device's netdev and its IPv4 address (the lane's rxe0 sits on dummy0, 169.254.7.1).
  auto netdev = run_command("cat /sys/class/infiniband/" + device + "/ports/1/gid_attrs/ndevs/0");
  REQUIRE(netdev.exit_code == 0);
  const std::string interface = netdev.out.substr(0, netdev.out.find('\n'));
  auto address = run_command("ip -4 -o addr show dev " + interface +
                             " | awk '{print $4}' | cut -d/ -f1 | head -n 1");
  const std::string ip = address.out.substr(0, address.out.find('\n'));
  REQUIRE_FALSE(ip.empty());
  faultline::testing::TempDir dir;
  // A coordinator on that address and two verbs agents that are not told their device.
  const std::string script =
      "cd " + dir.path() + " && export FAULTLINE_TOKEN=t && (" + kFaultline +
      " coordinator --listen " + ip +
      ":0 --port-file port --agents 2 --report-dir report pingpong &) && "
      "for i in $(seq 50); do [ -s port ] && break; sleep 0.1; done && "
      "for i in 1 2; do " +
      kFaultline + " agent --coordinator " + ip +
      ":$(cat port) --transport verbs 2>>agents.log & done; wait; cat agents.log";
  auto result = run_command("bash -c '" + script + "' 2>&1");
  INFO(result.out);
  CHECK_THAT(result.out, Catch::Contains("using device " + device + " (on " + interface));
  const auto report =
      nlohmann::json::parse(faultline::testing::read_text_file(dir.path() + "/report/report.json"));
  CHECK(report.at("run").at("device") == device);
  CHECK(report.at("scenarios").at(0).at("verdict") == "pass");
}

TEST_CASE("devices --save-profile on the verbs device round-trips through --compare-profile",
          "[integration][verbs]") {
  const std::string device = verbs_device().device;
  faultline::testing::TempDir dir;
  const std::string path = dir.path() + "/rxe-here.json";
  const std::string select = kFaultline + " devices --transport verbs --device " + device;
  const auto saved = run_command(select + " --save-profile " + path);
  INFO(saved.out << saved.err);
  REQUIRE(saved.exit_code == 0);
  // Its QP types were measured by creating one of each: Soft-RoCE makes RC, UC and UD.
  const auto profile = nlohmann::json::parse(faultline::testing::read_text_file(path));
  CHECK(profile.at("qp_types").at("RC") == true);
  CHECK(profile.at("qp_types").at("UD") == true);
  CHECK(profile.at("qp_types").at("source").at("kind") == "measured");
  // Soft-RoCE speaks RoCE v2 only (rxe_port_immutable): the GID types of its port say so.
  CHECK(profile.at("wire").at("protocols") == nlohmann::json{"RoCE v2"});
  CHECK(profile.at("identity").at("vendor_id") == 0xffffff);  // Soft-RoCE's
  const auto compared = run_command(select + " --compare-profile " + path);
  INFO(compared.out << compared.err);
  CHECK(compared.exit_code == 0);
  CHECK_THAT(compared.out, Catch::Contains("no difference") && !Catch::Contains("differs"));
  // The library's driver-constant rxe profile against the live device: each value named.
  const auto library = run_command(select + " --compare-profile rxe-linux-6.1");
  INFO(library.out);
  CHECK((library.exit_code == 0 || library.exit_code == 1));
  CHECK_THAT(library.out, Catch::Contains("qp_types.RC") && Catch::Contains("max_qp_wr"));
  CHECK_THAT(library.out, Catch::Matches("(.|\n)*wire.protocols +\\[\"RoCE v2\"\\] +\\[\"RoCE "
                                         "v2\"\\] +same(.|\n)*"));
}
