// `faultline devices` run as a process, the way a user runs it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "../harness_test_paths.hpp"
#include "faultline/harness/devices/device_profiles.hpp"
#include "support/background_process.hpp"
#include "support/run_command.hpp"

using faultline::testing::run_command;

TEST_CASE("devices --json lists the ofi providers tcp and shm with non-zero limits",
          "[integration][ofi]") {
  auto result = run_command(kFaultline + " devices --json");
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const auto document = nlohmann::json::parse(result.out);
  bool seen_tcp = false;
  bool seen_shm = false;
  for (const auto& device : document.at("devices")) {
    if (device.at("transport") != "ofi") continue;
    const std::string provider = device.at("provider");
    if (provider != "tcp" && provider != "shm") continue;
    (provider == "tcp" ? seen_tcp : seen_shm) = true;
    CAPTURE(provider, device.at("name"));
    const auto& limits = device.at("limits");
    for (const char* key : {"max_qp_wr", "max_recv_wr", "max_send_sge", "max_recv_sge",
                            "max_inline_data", "max_msg_size"}) {
      CAPTURE(key);
      CHECK(limits.at(key).get<uint64_t>() > 0);
    }
  }
  CHECK(seen_tcp);
  CHECK(seen_shm);
}

TEST_CASE("devices with an unknown device exits 2 naming the devices present",
          "[integration][ofi]") {
  auto result = run_command(kFaultline + " devices --device nosuch");
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("unknown device 'nosuch'"));
  CHECK_THAT(result.err, Catch::Contains("lo"));
  CHECK_THAT(result.err, Catch::Contains("shm"));
}

TEST_CASE("devices with an unknown provider or transport exits 2 naming those present",
          "[integration][ofi]") {
  auto provider = run_command(kFaultline + " devices --provider nosuch");
  CHECK(provider.exit_code == 2);
  CHECK_THAT(provider.err, Catch::Contains("unknown provider 'nosuch'; providers present:"));
  CHECK_THAT(provider.err, Catch::Contains("tcp"));
  auto transport = run_command(kFaultline + " devices --transport nosuch");
  CHECK(transport.exit_code == 2);
  CHECK_THAT(transport.err, Catch::Contains("unknown transport 'nosuch'; transports present: ofi"));
}

TEST_CASE("devices filters by provider and prints a table", "[integration][ofi]") {
  auto result = run_command(kFaultline + " devices --transport ofi --provider shm");
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.out, Catch::Contains("max_qp_wr"));
  CHECK_THAT(result.out, Catch::Contains("shm"));
  CHECK_THAT(result.out, !Catch::Contains("tcp"));
}

TEST_CASE("an unknown option or subcommand is a usage error, exit 2", "[integration]") {
  CHECK(run_command(kFaultline + " devices --bogus").exit_code == 2);
  CHECK(run_command(kFaultline + " nosuchcommand").exit_code == 2);
  CHECK(run_command(kFaultline).exit_code == 2);
  CHECK(run_command(kFaultline + " devices --help").exit_code == 0);
}

TEST_CASE("devices --save-profile writes a library profile: every value measured, with its source",
          "[integration][ofi]") {
  faultline::testing::TempDir dir;
  const std::string path = dir.path() + "/tcp-here.json";
  auto saved = run_command(kFaultline + " devices --transport ofi --provider tcp --device lo " +
                           "--save-profile " + path);
  INFO(saved.out << saved.err);
  REQUIRE(saved.exit_code == 0);
  // It loads as any profile of the library does: schema, and a source for every value.
  auto profile = faultline::harness::load_device_profile(path);
  if (!profile.ok()) FAIL(profile.error().describe());
  CHECK(profile->name == "tcp-here");
  CHECK(profile->limits.at("max_qp_wr") > 0);
  CHECK_THAT(profile->source_of("max_qp_wr"),
             Catch::StartsWith("measured: faultline devices --save-profile on "));
  CHECK_FALSE(profile->limits.contains("max_cqe"));  // libfabric does not say: left out
  // Held against the device it came from: no difference, exit 0.
  const std::string select = kFaultline + " devices --transport ofi --provider tcp --device lo";
  const auto same = run_command(select + " --compare-profile " + path);
  INFO(same.out << same.err);
  CHECK(same.exit_code == 0);
  CHECK_THAT(same.out, Catch::Contains("no difference"));
  // A library value that is not what this device grants: named, exit 1.
  auto edited = nlohmann::json::parse(faultline::testing::read_text_file(path));
  edited["limits"]["max_qp_wr"] = 3;
  std::ofstream(dir.path() + "/edited.json") << edited.dump(2);
  const auto differs = run_command(select + " --compare-profile " + dir.path() + "/edited.json");
  INFO(differs.out);
  CHECK(differs.exit_code == 1);
  CHECK_THAT(differs.out, Catch::Matches("(.|\n)*max_qp_wr +3 +[0-9]+ +differs(.|\n)*"));
  // A name the library does not hold: the profiles there are, exit 2.
  const auto unknown = run_command(select + " --compare-profile hns_roce-hip99");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("hns_roce-hip09"));
}

TEST_CASE(
    "a libfabric.so.1 that is empty or lacks its functions ends a command with exit 2 naming it",
    "[integration][ofi]") {
  // Ahead on the library path: a file of no bytes, and a real library (glibc's libutil stub)
  // with none of libfabric's functions. Both crashed every command that opened a fabric.
  faultline::testing::TempDir empty;
  std::ofstream(empty.path() + "/libfabric.so.1").flush();
  faultline::testing::TempDir functionless;
  std::filesystem::copy_file("/lib/x86_64-linux-gnu/libutil.so.1",
                             functionless.path() + "/libfabric.so.1");
  for (const auto& [folder, named] :
       {std::pair{empty.path(), std::string("file too short")},
        std::pair{functionless.path(), std::string("lacks fi_getinfo")}}) {
    for (const std::string& command :
         std::vector<std::string>{" devices", " run --report-dir " + folder + "/report"}) {
      auto result = run_command("LD_LIBRARY_PATH=" + folder + " " + kFaultline + command);
      CAPTURE(command, result.err);
      CHECK(result.exit_code == 2);
      CHECK_THAT(result.err, Catch::Contains(named) && Catch::Contains("libfabric.so.1"));
    }
  }
}
