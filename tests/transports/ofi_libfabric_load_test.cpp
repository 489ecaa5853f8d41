// libfabric is loaded on first use (transports/src/ofi/libfabric_api.cpp): the crash-signal
// actions libpsm2's constructor takes over at load time are put back as they were.
#include <catch2/catch.hpp>

#if FAULTLINE_WITH_OFI
#include <csignal>
#include <fstream>
#include <string>

#include "faultline/transports/registry.hpp"

namespace {

void own_handler(int /*signal*/) {}

bool libfabric_mapped() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("libfabric.so") != std::string::npos) return true;
  return false;
}

}  // namespace

// CTest runs each test case in a process of its own: libfabric is not loaded before.
TEST_CASE(
    "libfabric loads on the first fi_getinfo and leaves the crash-signal actions as they were",
    "[unit][ofi]") {
  CHECK_FALSE(libfabric_mapped());
  struct sigaction own = {};
  own.sa_handler = own_handler;
  for (int signal : {SIGSEGV, SIGABRT, SIGTERM}) REQUIRE(sigaction(signal, &own, nullptr) == 0);
  auto transport = faultline::transports::find_transport("ofi");
  REQUIRE(transport.ok());
  (void)transport.value()->list_devices();
  CHECK(libfabric_mapped());
  for (int signal : {SIGSEGV, SIGABRT, SIGTERM}) {
    struct sigaction now = {};
    REQUIRE(sigaction(signal, nullptr, &now) == 0);
    INFO("signal " << signal);
    CHECK(now.sa_handler == own_handler);
  }
}
#endif
