#include "faultline/harness/base/process.hpp"

#include <filesystem>

namespace faultline::harness {

std::string own_executable() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("faultline") : path.string();
}

}  // namespace faultline::harness
