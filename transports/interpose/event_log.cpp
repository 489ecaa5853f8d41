#include "event_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "fault_rules.hpp"

namespace faultline::interpose {

void log_event(nlohmann::json event) {
  static const int fd = [] {
    const char* path = std::getenv("FAULTLINE_FAULT_LOG");
    return path == nullptr ? -1 : ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  }();
  if (fd < 0) return;
  event["pid"] = ::getpid();
  if (auto rank = launcher_rank()) event["rank"] = *rank;
  const std::string line = event.dump() + "\n";
  (void)!::write(fd, line.data(), line.size());
}

}  // namespace faultline::interpose
