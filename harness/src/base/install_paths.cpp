#include "faultline/harness/base/install_paths.hpp"

#include <cstdlib>
#include <filesystem>

#include "faultline/harness/base/process.hpp"

namespace faultline::harness {

std::string installed_path(const std::string& relative) {
  const std::filesystem::path binary_dir = std::filesystem::path(own_executable()).parent_path();
  if (binary_dir.filename() != std::filesystem::path(FAULTLINE_INSTALL_BINDIR).filename())
    return "";
  const std::filesystem::path candidate = binary_dir.parent_path() / relative;
  std::error_code error;
  return std::filesystem::is_directory(candidate, error) ? candidate.string() : "";
}

std::string installed_scenario_dir() { return installed_path(FAULTLINE_INSTALLED_SCENARIO_DIR); }

std::string installed_interpose_dir() { return installed_path(FAULTLINE_INSTALLED_INTERPOSE_DIR); }

std::string default_scenario_dir() {
  if (const char* dir = std::getenv("FAULTLINE_SCENARIO_DIR"); dir != nullptr && *dir != '\0')
    return dir;
  if (std::string installed = installed_scenario_dir(); !installed.empty()) return installed;
  return FAULTLINE_SOURCE_SCENARIO_DIR;
}

}  // namespace faultline::harness
