#pragma once

#include <cstddef>

#include "faultline/protocols/completion_tracker.hpp"
#include "faultline/transports/registered_buffer.hpp"

namespace faultline::protocols {

/// `count` receive buffers of `bytes` each, in one allocation registered once, posted (and
/// posted again once consumed) through a CompletionTracker so that every completion of one is
/// checked. What each engine used to do by hand for its frames and chunks.
class ReceiveSlots {
 public:
  /// Allocates and registers the slots on `device`; nothing is posted yet.
  static Result<ReceiveSlots> create(transports::Device& device, size_t count, size_t bytes);

  /// Posts slot `index` on `endpoint`, tracked as work of `kind` (its index is the slot).
  Status post(size_t index, transports::Endpoint& endpoint, CompletionTracker& tracker,
              uint32_t kind);

  std::byte* slot(size_t index) const { return buffer_.data() + index * bytes_; }
  size_t count() const { return count_; }
  size_t bytes() const { return bytes_; }

 private:
  ReceiveSlots() = default;

  transports::RegisteredBuffer buffer_;
  size_t count_ = 0;
  size_t bytes_ = 0;
};

}  // namespace faultline::protocols
