#include "faultline/protocols/tagged/tag_matcher.hpp"

namespace faultline::protocols::tagged {

TagMatcher::Posted TagMatcher::post(uint64_t tag, ReceiveTarget target) {
  const TagKey key{tag, receives_.next(tag)};
  if (auto found = unexpected_.find(key); found != unexpected_.end()) {
    Posted posted{key, std::move(found->second)};
    unexpected_.erase(found);
    return posted;
  }
  posted_.emplace(key, target);
  return {key, std::nullopt};
}

TagMatcher::Arrival TagMatcher::arrive(TagKey key, std::span<const std::byte> payload,
                                       ReceiveTarget& target) {
  if (auto found = posted_.find(key); found != posted_.end()) {
    target = found->second;
    posted_.erase(found);
    return Arrival::kMatched;
  }
  // A key whose receive was posted and is no longer waiting was delivered already.
  if (receives_.issued(key) || unexpected_.contains(key)) return Arrival::kDuplicate;
  unexpected_.emplace(key, std::vector<std::byte>(payload.begin(), payload.end()));
  return Arrival::kUnexpected;
}

std::optional<ReceiveTarget> TagMatcher::take(TagKey key) {
  auto found = posted_.find(key);
  if (found == posted_.end()) return std::nullopt;
  ReceiveTarget target = found->second;
  posted_.erase(found);
  return target;
}

}  // namespace faultline::protocols::tagged
