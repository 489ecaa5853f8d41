#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "faultline/transports/memory_provider.hpp"

namespace faultline::transports {

Result<std::shared_ptr<std::byte[]>> HostMemoryProvider::allocate(size_t length, size_t alignment) {
  void* memory = nullptr;
  // posix_memalign rejects a zero size on some libcs; a zero-length buffer still gets a page.
  const size_t bytes = length == 0 ? alignment : length;
  if (int rc = posix_memalign(&memory, alignment, bytes); rc != 0) {
    return errno_error("posix_memalign", rc,
                       "allocating " + std::to_string(length) + " bytes of host memory");
  }
  std::memset(memory, 0, bytes);
  return std::shared_ptr<std::byte[]>(static_cast<std::byte*>(memory),
                                      [](std::byte* p) { std::free(p); });
}

}  // namespace faultline::transports
