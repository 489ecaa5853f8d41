#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace faultline::protocols::tagged {

/// A message's place in its tag's stream: the k-th message sent with a tag has seq k, and only
/// the k-th receive posted for that tag takes it. Matching by (tag, seq), not by arrival order,
/// is what keeps per-tag order when eager frames overtake rendezvous writes.
struct TagKey {
  uint64_t tag = 0;
  uint64_t seq = 0;
  bool operator==(const TagKey&) const = default;
  friend bool operator<(const TagKey& a, const TagKey& b) {
    return a.tag != b.tag ? a.tag < b.tag : a.seq < b.seq;
  }
};

/// Hands out the next seq of each tag.
class TagSequencer {
 public:
  uint64_t next(uint64_t tag) { return next_[tag]++; }
  /// True once `key.seq` has been handed out for `key.tag`.
  bool issued(TagKey key) const {
    auto found = next_.find(key.tag);
    return found != next_.end() && key.seq < found->second;
  }

 private:
  std::map<uint64_t, uint64_t> next_;
};

/// Which part of which receive request a message is for.
struct ReceiveTarget {
  uint64_t request = 0;
  size_t index = 0;  ///< position in a grouped receive
};

/// The receiving side's matching of eager messages against posted receives. A message that
/// arrives before its receive is kept (copied) until the receive is posted; one whose key was
/// already taken is a duplicate, reported rather than delivered twice.
class TagMatcher {
 public:
  enum class Arrival { kMatched, kUnexpected, kDuplicate };

  /// Posts a receive for `tag`: its key, and the message already waiting for it, if one is.
  struct Posted {
    TagKey key;
    std::optional<std::vector<std::byte>> waiting;
  };
  Posted post(uint64_t tag, ReceiveTarget target);

  /// An eager message arrived. kMatched: `target` is set to the receive it completes (now
  /// taken). kUnexpected: kept until its receive is posted. kDuplicate: its key was delivered
  /// or is already waiting; dropped.
  Arrival arrive(TagKey key, std::span<const std::byte> payload, ReceiveTarget& target);

  /// Takes the posted receive of `key` for data that came another way (a rendezvous write).
  std::optional<ReceiveTarget> take(TagKey key);

  size_t posted_count() const { return posted_.size(); }
  size_t unexpected_count() const { return unexpected_.size(); }
  const std::map<TagKey, ReceiveTarget>& posted() const { return posted_; }

 private:
  TagSequencer receives_;
  std::map<TagKey, ReceiveTarget> posted_;
  std::map<TagKey, std::vector<std::byte>> unexpected_;
};

}  // namespace faultline::protocols::tagged
