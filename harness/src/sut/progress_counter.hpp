#pragma once

// The host side of the interposers' progress counter (FAULTLINE_PROGRESS): 8 bytes of shared
// memory (a memfd, named to the program as /proc/PID/fd/N of this process, so that any
// filesystem may hold the report) the program's processes map and add their posts and
// completions to, mapped here to be read.
#include <cstdint>
#include <string>

namespace faultline::harness::sut {

class ProgressCounter {
 public:
  /// A zeroed counter; without one (no memfd, no mapping) path() is empty and count() null:
  /// the run then has no quiet limit, nothing else is lost.
  ProgressCounter();
  ProgressCounter(const ProgressCounter&) = delete;
  ProgressCounter& operator=(const ProgressCounter&) = delete;
  ~ProgressCounter();

  /// What FAULTLINE_PROGRESS names for the program's processes ("" without a counter).
  const std::string& path() const { return path_; }
  /// The counter, as the run watches it (ProgressWatch).
  const uint64_t* count() const { return count_; }

 private:
  int fd_ = -1;
  std::string path_;
  uint64_t* count_ = nullptr;
};

}  // namespace faultline::harness::sut
