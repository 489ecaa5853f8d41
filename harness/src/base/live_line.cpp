#include "faultline/harness/base/live_line.hpp"

#include <iostream>
#include <mutex>

namespace faultline::harness {

namespace {

// Threads log (a coordinator's connections each have one): one at a time on the terminal.
std::mutex& terminal() {
  static std::mutex mutex;
  return mutex;
}
std::string& shown() {
  static std::string text;
  return text;
}

constexpr const char* kClear = "\r\033[K";

}  // namespace

void show_live_line(const std::string& text) {
  std::lock_guard lock(terminal());
  shown() = text;
  std::cout << kClear << text << std::flush;
}

void clear_live_line() {
  std::lock_guard lock(terminal());
  if (shown().empty()) return;
  shown().clear();
  std::cout << kClear << std::flush;
}

void write_error_line(const std::string& line) {
  std::lock_guard lock(terminal());
  if (!shown().empty()) std::cout << kClear << std::flush;
  std::cerr << line << std::endl;
  if (!shown().empty()) std::cout << shown() << std::flush;
}

}  // namespace faultline::harness
