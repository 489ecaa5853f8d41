#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "process_plan.hpp"

namespace faultline::transports::interpose {

/// Changes every one of `length` bytes, so that bytes changed twice (a pingpong echoing them
/// back) are still wrong.
void scribble(std::byte* bytes, size_t length);

/// One piece of a posted receive buffer.
struct Segment {
  std::byte* address = nullptr;
  size_t length = 0;
};

/// The buffers of the receives a program posted, so a faulted completion can change what it
/// delivered. Kept only while a plan has data rules; each entry is forgotten at its completion.
/// Programs reuse work request ids (ibv_rc_pingpong posts every receive as id 1): receives of
/// one (queue, id) are kept in posting order and complete in it, as a receive queue does.
class PostedBuffers {
 public:
  static PostedBuffers& get();

  /// Records the receive `id` posted on `queue`; with `snapshot`, its current bytes too (what
  /// `suppress` restores).
  void record(uint64_t queue, uint64_t id, std::vector<Segment> segments, bool snapshot);
  /// Applies `action` to the first `delivered` bytes of receive (`queue`, `id`) and forgets it;
  /// returns the bytes changed (0 when the receive is unknown).
  size_t apply(uint64_t queue, uint64_t id, DataAction action, size_t delivered);
  void forget(uint64_t queue, uint64_t id);

 private:
  struct Posted {
    std::vector<Segment> segments;
    std::vector<std::byte> before;  ///< the bytes at post time (suppress)
  };
  std::mutex mutex_;
  std::map<std::pair<uint64_t, uint64_t>, std::deque<Posted>> posted_;
};

}  // namespace faultline::transports::interpose
