#include "faultline/reports/directory_lock.hpp"
#include "faultline/reports/owned_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <utility>

namespace faultline::reports {

Result<DirectoryLock> DirectoryLock::acquire(const std::string& directory) {
  FAULTLINE_RETURN_IF_ERROR(make_owned_directory(directory));
  const std::string path = directory + "/.faultline.lock";
  // Never through a link: one planted there would have this run truncate its target.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) return errno_error("open", errno, path);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int saved = errno;
    char owner[32] = {};
    const ssize_t n = ::pread(fd, owner, sizeof owner - 1, 0);
    ::close(fd);
    if (saved != EWOULDBLOCK) return errno_error("flock", saved, path);
    return Error{ErrorCode::kInvalidArgument,
                 "the report directory " + directory + " is in use by another faultline run" +
                     (n > 0 ? " (pid " + std::string(owner, static_cast<size_t>(n)) + ")" : "")}
        .with_hint("give each run its own --report-dir; two runs in one would mix their files");
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    const int saved = errno;
    ::close(fd);
    return errno_error("write", saved, path);
  }
  return DirectoryLock(fd);
}

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace faultline::reports
