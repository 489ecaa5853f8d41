// The progress counter: a shared mapping of FAULTLINE_PROGRESS, mapped at the first post or
// completion, a relaxed atomic increment at each.
#include "progress.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace faultline::transports::interpose {

namespace {

// The counter, or null without one (no variable, or a file that could not be mapped).
uint64_t* counter() {
  static uint64_t* const mapped = []() -> uint64_t* {
    const char* path = std::getenv("FAULTLINE_PROGRESS");
    if (path == nullptr || *path == '\0') return nullptr;
    const int fd = ::open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return nullptr;
    void* memory = ::mmap(nullptr, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    return memory == MAP_FAILED ? nullptr : static_cast<uint64_t*>(memory);
  }();
  return mapped;
}

}  // namespace

void note_progress() {
  if (uint64_t* count = counter())
    std::atomic_ref<uint64_t>(*count).fetch_add(1, std::memory_order_relaxed);
}

}  // namespace faultline::transports::interpose
