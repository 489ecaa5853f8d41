#pragma once

#include <cstddef>
#include <memory>

#include "faultline/transports/transport.hpp"

namespace faultline::transports {

/// Page-aligned host memory registered on one device: what scenarios, engines, probes and
/// benchmarks post from and into. Move-only; the region goes before the memory it covers.
struct RegisteredBuffer {
  std::shared_ptr<std::byte[]> memory;
  size_t length = 0;  ///< bytes of `memory` the caller asked for
  std::unique_ptr<MemoryRegion> region;

  /// `bytes` of zeroed, page-aligned host memory registered on `device` with `access` (kAccess*
  /// flags).
  static Result<RegisteredBuffer> allocate(Device& device, size_t bytes,
                                           uint32_t access = kAccessLocalWrite |
                                                             kAccessRemoteWrite |
                                                             kAccessRemoteRead);

  std::byte* data() const { return memory.get(); }
  /// The segment [offset, offset + length) of this buffer, with its region.
  Segment segment(size_t offset, size_t bytes) const {
    return {memory.get() + offset, static_cast<uint32_t>(bytes), region.get()};
  }
  /// The whole buffer as one segment.
  Segment whole() const { return segment(0, length); }
};

}  // namespace faultline::transports
