#include "event_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

#include "process_plan.hpp"

namespace faultline::transports::interpose {

void log_event(nlohmann::json event) {
  static const int fd = [] {
    const char* path = std::getenv("FAULTLINE_FAULT_LOG");
    return path == nullptr
               ? -1
               : ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  }();
  if (fd < 0) return;
  event["pid"] = ::getpid();
  // Wall-clock milliseconds, to set against the time a program printed a line.
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  event["time_ms"] = static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
  if (auto rank = launcher_rank()) event["rank"] = *rank;
  // A program path or frame that is not UTF-8 (bytes from the program) would make dump throw
  // inside the program: each bad byte becomes U+FFFD.
  const std::string line =
      event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  (void)!::write(fd, line.data(), line.size());
}

}  // namespace faultline::transports::interpose
