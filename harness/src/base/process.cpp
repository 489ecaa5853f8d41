#include "faultline/harness/base/process.hpp"

#include <csignal>
#include <filesystem>

namespace faultline::harness {

std::string own_executable() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("faultline") : path.string();
}

namespace {

volatile sig_atomic_t stop_flag = 0;

}  // namespace

void request_stop() { stop_flag = 1; }

bool stop_requested() { return stop_flag != 0; }

}  // namespace faultline::harness
