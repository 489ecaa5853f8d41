#pragma once

#include <string>

#include "faultline/core/status.hpp"

namespace faultline::reports {

/// A run's hold on its report directory: two runs writing one directory would interleave their
/// files. An exclusive flock on `DIR/.faultline.lock`, holding the owner's pid, released when
/// the object (or the process) ends.
class DirectoryLock {
 public:
  /// Takes the lock, creating the directory; an error naming the other run's pid when it holds
  /// the lock.
  static Result<DirectoryLock> acquire(const std::string& directory);
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  ~DirectoryLock();

 private:
  explicit DirectoryLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace faultline::reports
