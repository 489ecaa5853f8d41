#include "run_queue_clock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace faultline::harness {

RunQueueClock::RunQueueClock() : fd_(::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {
  if (fd_ >= 0 && waited().count() < 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

RunQueueClock::~RunQueueClock() {
  if (fd_ >= 0) ::close(fd_);
}

std::chrono::nanoseconds RunQueueClock::waited() const {
  if (fd_ < 0) return std::chrono::nanoseconds{0};
  // "<on cpu ns> <waiting ns> <timeslices>\n"
  char text[96];
  const ssize_t got = ::pread(fd_, text, sizeof text - 1, 0);
  if (got <= 0) return std::chrono::nanoseconds{-1};
  const char* end = text + got;
  const char* space = std::find(static_cast<const char*>(text), end, ' ');
  uint64_t waited = 0;
  if (space == end || std::from_chars(space + 1, end, waited).ec != std::errc{})
    return std::chrono::nanoseconds{-1};
  return std::chrono::nanoseconds{static_cast<int64_t>(waited)};
}

}  // namespace faultline::harness
