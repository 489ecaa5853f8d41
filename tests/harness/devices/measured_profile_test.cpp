// A profile measured here: a file the library's loader takes (every value with its source),
// and a library profile held against it value by value.
#include <catch2/catch.hpp>
#include <fstream>

#include "faultline/harness/devices/device_profiles.hpp"
#include "faultline/harness/devices/measured_profile.hpp"
#include "support/background_process.hpp"

using faultline::harness::compare_profiles;
using faultline::harness::has_differences;
using faultline::harness::measured_profile;
using nlohmann::json;

namespace {

faultline::transports::DeviceInfo rxe_like() {
  faultline::transports::DeviceInfo device;
  device.transport = "verbs";
  device.provider = "roce";
  device.native_provider = "rdma_rxe";
  device.name = "rxe0";
  device.firmware = "0.0.0";
  device.limits.max_qp_wr = 1048576;
  device.limits.max_recv_wr = 1048576;
  device.limits.max_send_sge = 32;
  device.limits.max_recv_sge = 32;
  device.limits.max_inline_data = 240;
  device.limits.max_mtu = 4096;
  device.wire_protocols = {"RoCE v2"};
  device.vendor_id = 0xffffff;
  device.vendor_part_id = 0;
  return device;
}

}  // namespace

TEST_CASE("a measured profile loads as a library profile and compares with no difference",
          "[unit]") {
  const std::map<std::string, bool> types = {{"RC", true}, {"UC", true}, {"UD", true}};
  const json saved = measured_profile(rxe_like(), "rxe-here", types);
  faultline::testing::TempDir dir;
  std::ofstream(dir.path() + "/rxe-here.json") << saved.dump(2);
  auto loaded = faultline::harness::load_device_profile(dir.path() + "/rxe-here.json");
  REQUIRE(loaded.ok());
  CHECK(loaded->limits.at("max_qp_wr") == 1048576);
  CHECK(loaded->supports.at("qp_types") == types);
  CHECK_THAT(loaded->source_of("qp_types"), Catch::StartsWith("measured: faultline devices"));
  CHECK(loaded->document.at("wire").at("protocols") == json{"RoCE v2"});
  CHECK(loaded->document.at("identity").at("vendor_id") == 0xffffff);  // who it says it is
  CHECK_THAT(loaded->source_of("wire"), Catch::StartsWith("measured: faultline devices"));
  // The round trip: the file against the same device measured again.
  const auto same = compare_profiles(loaded->document, measured_profile(rxe_like(), "x", types));
  CHECK_FALSE(has_differences(same));
  for (const auto& value : same) CHECK(value.verdict == "same");
}

TEST_CASE(
    "a library profile against this device: what differs, what it lacks, what is not "
    "measured here",
    "[unit]") {
  json library = measured_profile(rxe_like(), "lib", {{"RC", true}, {"UD", false}});
  library["limits"]["max_qp_wr"] = 32768;      // differs
  library["limits"].erase("max_inline_data");  // the library lacks it
  library["limits"]["max_srq_wr"] = 16384;     // not measured here
  auto device = rxe_like();
  const auto values =
      compare_profiles(library, measured_profile(device, "here", {{"RC", true}, {"UD", true}}));
  std::map<std::string, std::string> verdicts;
  for (const auto& value : values) verdicts[value.name] = value.verdict;
  CHECK(verdicts.at("max_qp_wr") == "differs");
  CHECK(verdicts.at("max_inline_data") == "library lacks it");
  CHECK(verdicts.at("max_srq_wr") == "not measured here");
  CHECK(verdicts.at("qp_types.UD") == "differs");
  CHECK(verdicts.at("qp_types.RC") == "same");
  CHECK(verdicts.at("wire.protocols") == "same");
  CHECK(verdicts.at("identity.vendor_id") == "same");
  CHECK(has_differences(values));
  // A count the library knows only from below holds when the device has at least as many.
  library = measured_profile(rxe_like(), "lib", {});
  library["limits"]["max_qp"] = {{"at_least", 4096}};
  using Case = std::pair<uint32_t, std::string>;
  for (const auto& [here, verdict] :
       {Case{4096, "within its lower bound"}, Case{4095, "below its lower bound"}}) {
    device = rxe_like();
    device.limits.max_qp = here;
    const auto bound = compare_profiles(library, measured_profile(device, "here", {}));
    for (const auto& value : bound) {
      if (value.name != "max_qp") continue;
      CHECK(value.verdict == verdict);
      CHECK(value.library == "at least 4096");
    }
    CHECK(has_differences(bound) == (here < 4096));
  }
  // The protocols are a set: another order is the same, another protocol differs.
  library["wire"]["protocols"] = {"RoCE v2", "RoCE v1"};
  device.wire_protocols = {"RoCE v1", "RoCE v2"};
  auto reordered = compare_profiles(library, measured_profile(device, "here", {}));
  device.wire_protocols = {"iWARP"};
  auto other = compare_profiles(library, measured_profile(device, "here", {}));
  for (const auto& value : reordered)
    if (value.name == "wire.protocols") CHECK(value.verdict == "same");
  for (const auto& value : other)
    if (value.name == "wire.protocols") CHECK(value.verdict == "differs");
}
