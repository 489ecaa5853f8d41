#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/owned_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
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

// `content` into a new file beside `path`, renamed over it: a link or file planted at `path`
// is replaced, never followed.
Status replace_atomically(const std::string& path, const std::string& content) {
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

}  // namespace

Status write_file_atomically(const std::string& path, const std::string& content) {
  const std::filesystem::path target(path);
  if (target.has_parent_path())
    FAULTLINE_RETURN_IF_ERROR(make_owned_directory(target.parent_path().string()));
  return replace_atomically(path, content);
}

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

std::string user_file_problem(const std::string& path) {
  if (path == "-") return "";
  if (path.empty()) return "an empty file name";
  const uid_t self = ::geteuid();
  const std::filesystem::path target(path);
  const std::string folder =
      target.has_parent_path() ? target.parent_path().string() : std::string(".");
  struct stat parent {};
  if (::stat(folder.c_str(), &parent) != 0)
    return folder + ": " + std::strerror(errno) + " (the folder of " + path + ")";
  if (!S_ISDIR(parent.st_mode)) return folder + " is not a folder (the folder of " + path + ")";
  if (parent.st_uid != self && parent.st_uid != 0) {
    return path + " is in a folder of uid " + std::to_string(parent.st_uid) +
           ", not of this user (uid " + std::to_string(self) + ") or root";
  }
  const bool shared = (parent.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (shared && (parent.st_mode & S_ISVTX) == 0) {
    return path + " is in " + folder +
           ", a folder others may write in without the sticky bit: anyone could replace it";
  }
  struct stat there {};
  if (::lstat(path.c_str(), &there) != 0) {
    if (errno == ENOENT) return "";
    return path + ": " + std::strerror(errno);
  }
  if (!S_ISREG(there.st_mode))
    return path + " is " + kind_of(there.st_mode) + ": faultline writes only regular files";
  if (shared && there.st_uid != self) {
    return path + " belongs to uid " + std::to_string(there.st_uid) + " in the shared folder " +
           folder + ": faultline replaces only its own files there";
  }
  return "";
}

Status write_user_file(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    if (std::fflush(stdout) != 0) return errno_error("write", errno, "standard output");
    return {};
  }
  if (const std::string problem = user_file_problem(path); !problem.empty())
    return Error{ErrorCode::kInvalidArgument, problem}.with_hint(
        "name a new file, or a regular file of your own, in a folder of your own");
  return replace_atomically(path, content);
}

}  // namespace faultline::reports
