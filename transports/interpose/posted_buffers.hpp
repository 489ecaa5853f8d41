#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

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
  /// returns the bytes changed, nullopt when no post of the receive was seen.
  std::optional<size_t> apply(uint64_t queue, uint64_t id, DataAction action, size_t delivered);
  void forget(uint64_t queue, uint64_t id);

 private:
  struct Posted {
    std::vector<Segment> segments;
    std::vector<std::byte> before;  ///< the bytes at post time (suppress)
  };
  std::mutex mutex_;
  std::map<std::pair<uint64_t, uint64_t>, std::deque<Posted>> posted_;
};

/// A data fault's effect as its event says it: `bytes_changed`, and `buffer_unseen` where no
/// post of the receive was seen (a provider's receives beneath the program: nothing changed).
nlohmann::json data_effect(std::optional<size_t> changed);

}  // namespace faultline::transports::interpose
