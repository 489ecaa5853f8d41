// `faultline devices` and device selection on a real verbs device (the Soft-RoCE lane's rxe0).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "faultline/transports/registry.hpp"
#include "harness_test_paths.hpp"
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
