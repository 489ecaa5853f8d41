#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "faultline/core/status.hpp"

namespace faultline::transports {

/// Memory that transports register. Host memory today; device memory (CUDA, Ascend ACL) is
/// another provider, and transports do not change.
class MemoryProvider {
 public:
  virtual ~MemoryProvider() = default;
  virtual std::string_view name() const = 0;
  /// A zero-filled buffer of `length` bytes aligned to `alignment`, released by the deleter.
  virtual Result<std::shared_ptr<std::byte[]>> allocate(size_t length, size_t alignment) = 0;
};

/// Page-aligned host memory.
class HostMemoryProvider final : public MemoryProvider {
 public:
  std::string_view name() const override { return "host"; }
  Result<std::shared_ptr<std::byte[]>> allocate(size_t length, size_t alignment) override;
};

}  // namespace faultline::transports
