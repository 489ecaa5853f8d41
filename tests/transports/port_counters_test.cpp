// Reading a port's sysfs counters and what grew between two readings, on a directory laid out
// as /sys/class/infiniband is (the real rxe0 is read in the Soft-RoCE lane, through the RNR
// scenario's report).
#include "faultline/transports/port_counters.hpp"

#include <unistd.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

using namespace faultline;
using namespace faultline::transports;

namespace {

struct FakeSysfs {
  std::filesystem::path root =
      std::filesystem::temp_directory_path() /
      ("faultline-sysfs-" + std::to_string(::getpid()) + "-" + std::to_string(rand()));
  ~FakeSysfs() { std::filesystem::remove_all(root); }
  void write(const std::string& relative, const std::string& text) const {
    const auto path = root / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
};

}  // namespace

TEST_CASE("a port's hw_counters and counters are read by directory and name", "[unit]") {
  FakeSysfs sysfs;
  sysfs.write("rxe0/ports/1/hw_counters/rcvd_rnr_err", "3\n");
  sysfs.write("rxe0/ports/1/hw_counters/sent_pkts", "120\n");
  sysfs.write("rxe0/ports/1/counters/port_xmit_data", "4000\n");
  sysfs.write("rxe0/ports/1/hw_counters/not_a_number", "n/a\n");
  const auto counters = read_port_counters("rxe0", 1, sysfs.root.string());
  REQUIRE(counters.has_value());
  CHECK(counters->device == "rxe0");
  CHECK(counters->port == 1);
  CHECK(counters->values == std::map<std::string, uint64_t>{{"hw_counters/rcvd_rnr_err", 3},
                                                            {"hw_counters/sent_pkts", 120},
                                                            {"counters/port_xmit_data", 4000}});
}

TEST_CASE("a device or port without a sysfs directory has no counters", "[unit]") {
  FakeSysfs sysfs;
  sysfs.write("rxe0/ports/1/hw_counters/sent_pkts", "1\n");
  CHECK_FALSE(read_port_counters("lo", 0, sysfs.root.string()).has_value());
  CHECK_FALSE(read_port_counters("rxe0", 2, sysfs.root.string()).has_value());
  CHECK_FALSE(read_port_counters("", 1, sysfs.root.string()).has_value());
}

TEST_CASE("only counters that grew are kept, by how much", "[unit]") {
  const PortCounters before{"rxe0",
                            1,
                            {{"hw_counters/a", 5},
                             {"hw_counters/b", 7},
                             {"hw_counters/reset", 100},
                             {"hw_counters/gone", 1}}};
  const PortCounters after{"rxe0",
                           1,
                           {{"hw_counters/a", 9},
                            {"hw_counters/b", 7},
                            {"hw_counters/reset", 2},
                            {"hw_counters/new", 4}}};
  CHECK(grown_counters(before, after) == std::map<std::string, uint64_t>{{"hw_counters/a", 4}});
}
