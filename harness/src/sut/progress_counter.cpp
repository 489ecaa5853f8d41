#include "progress_counter.hpp"

#include <sys/mman.h>
#include <unistd.h>

namespace faultline::harness::sut {

ProgressCounter::ProgressCounter() {
  fd_ = ::memfd_create("faultline-progress", MFD_CLOEXEC);
  if (fd_ < 0) return;
  void* memory = ::ftruncate(fd_, sizeof(uint64_t)) == 0
                     ? ::mmap(nullptr, sizeof(uint64_t), PROT_READ, MAP_SHARED, fd_, 0)
                     : MAP_FAILED;
  if (memory == MAP_FAILED) return;
  count_ = static_cast<uint64_t*>(memory);
  path_ = "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd_);
}

ProgressCounter::~ProgressCounter() {
  if (count_ != nullptr) ::munmap(count_, sizeof(uint64_t));
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace faultline::harness::sut
