#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/owned_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

namespace faultline::reports {

namespace {

// The process's umask, read without changing it (umask(2) can only set it).
mode_t process_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  }
  return 022;
}

}  // namespace

Status write_file_atomically(const std::string& path, const std::string& content) {
  const std::filesystem::path target(path);
  if (target.has_parent_path())
    FAULTLINE_RETURN_IF_ERROR(make_owned_directory(target.parent_path().string()));
  std::string temporary = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) return errno_error("mkstemp", errno, "next to " + path);
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      return errno_error("write", saved, temporary);
    }
    written += static_cast<size_t>(n);
  }
  ::fchmod(fd, 0666 & ~process_umask());  // as a plain open would create it
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    return errno_error("fsync", saved, temporary);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    return errno_error("rename", saved, temporary + " to " + path);
  }
  return {};
}

}  // namespace faultline::reports
