#include "posted_buffers.hpp"

#include <algorithm>
#include <cstring>

namespace faultline::transports::interpose {

void scribble(std::byte* bytes, size_t length) {
  // Not an inversion: 0x5B is odd, so only 256 passes would restore a byte.
  for (size_t i = 0; i < length; ++i) bytes[i] = std::byte(static_cast<uint8_t>(bytes[i]) + 0x5B);
}

PostedBuffers& PostedBuffers::get() {
  static auto* buffers = new PostedBuffers();
  return *buffers;
}

void PostedBuffers::record(uint64_t queue, uint64_t id, std::vector<Segment> segments,
                           bool snapshot) {
  Posted posted{std::move(segments), {}};
  if (snapshot) {
    for (const Segment& segment : posted.segments)
      posted.before.insert(posted.before.end(), segment.address, segment.address + segment.length);
  }
  std::lock_guard lock(mutex_);
  posted_[{queue, id}].push_back(std::move(posted));
}

std::optional<size_t> PostedBuffers::apply(uint64_t queue, uint64_t id, DataAction action,
                                           size_t delivered) {
  Posted posted;
  {
    std::lock_guard lock(mutex_);
    auto found = posted_.find({queue, id});
    if (found == posted_.end()) return std::nullopt;
    posted = std::move(found->second.front());
    found->second.pop_front();
    if (found->second.empty()) posted_.erase(found);
  }
  size_t changed = 0;
  for (const Segment& segment : posted.segments) {
    const size_t length = std::min(segment.length, delivered - changed);
    if (action == DataAction::kScribble) {
      scribble(segment.address, length);
    } else if (action == DataAction::kSuppress && posted.before.size() >= changed + length) {
      std::memcpy(segment.address, posted.before.data() + changed, length);
    }
    changed += length;
    if (changed == delivered) break;
  }
  return changed;
}

void PostedBuffers::forget(uint64_t queue, uint64_t id) {
  std::lock_guard lock(mutex_);
  auto found = posted_.find({queue, id});
  if (found == posted_.end()) return;
  found->second.pop_front();
  if (found->second.empty()) posted_.erase(found);
}

nlohmann::json data_effect(std::optional<size_t> changed) {
  if (changed) return {{"bytes_changed", *changed}};
  return {{"bytes_changed", 0}, {"buffer_unseen", true}};
}

}  // namespace faultline::transports::interpose
