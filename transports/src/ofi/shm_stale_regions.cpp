#include "faultline/transports/ofi/shm_stale_regions.hpp"

#include <unistd.h>

#include <filesystem>
#include <mutex>

namespace faultline::transports::ofi {

std::vector<std::string> remove_stale_shm_regions(pid_t pid, const std::string& directory) {
  const std::string prefix = std::to_string(pid) + ":";
  std::vector<std::string> removed;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    if (std::filesystem::remove(entry.path(), error)) removed.push_back(name);
  }
  return removed;
}

void remove_own_stale_shm_regions_once() {
  static std::once_flag once;
  std::call_once(once, [] { (void)remove_stale_shm_regions(::getpid()); });
}

}  // namespace faultline::transports::ofi
