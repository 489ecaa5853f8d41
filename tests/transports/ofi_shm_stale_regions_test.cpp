// Stale shm regions left by a SIGKILLed process whose pid comes round again (libfabric 1.17
// then fails fi_enable with EBUSY, or dies of SIGBUS on an empty region).
#include <catch2/catch.hpp>

#if FAULTLINE_WITH_OFI
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "faultline/transports/ofi/shm_stale_regions.hpp"

using faultline::transports::ofi::remove_stale_shm_regions;

TEST_CASE("only the regions named after the given pid are removed", "[unit]") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("faultline-shm-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* name : {"4242:0:0", "4242:1:3", "42420:0:0", "424:0:0", "other"})
    std::ofstream(dir / name) << "x";
  auto removed = remove_stale_shm_regions(4242, dir.string());
  std::sort(removed.begin(), removed.end());
  CHECK(removed == std::vector<std::string>{"4242:0:0", "4242:1:3"});
  CHECK(std::filesystem::exists(dir / "42420:0:0"));
  CHECK(std::filesystem::exists(dir / "424:0:0"));
  CHECK(std::filesystem::exists(dir / "other"));
  std::filesystem::remove_all(dir);
  CHECK(remove_stale_shm_regions(4242, dir.string()).empty());  // a missing directory is fine
}
#endif
