// Tag matching: the k-th message of a tag goes to the k-th receive of that tag, whatever the
// order of arrival; early messages wait, duplicates are refused.
#include "faultline/protocols/tagged/tag_matcher.hpp"

#include <catch2/catch.hpp>

using namespace faultline::protocols::tagged;

namespace {

std::vector<std::byte> bytes_of(uint8_t value, size_t count = 4) {
  return std::vector<std::byte>(count, std::byte{value});
}

}  // namespace

TEST_CASE("the sequencer numbers each tag on its own", "[unit]") {
  TagSequencer sequencer;
  CHECK(sequencer.next(5) == 0);
  CHECK(sequencer.next(5) == 1);
  CHECK(sequencer.next(9) == 0);
  CHECK(sequencer.issued({5, 1}));
  CHECK_FALSE(sequencer.issued({5, 2}));
  CHECK_FALSE(sequencer.issued({7, 0}));
}

TEST_CASE("a message arriving after its receive completes that receive", "[unit]") {
  TagMatcher matcher;
  auto posted = matcher.post(3, {10, 0});
  CHECK(posted.key == TagKey{3, 0});
  CHECK_FALSE(posted.waiting);
  ReceiveTarget target;
  CHECK(matcher.arrive({3, 0}, bytes_of(1), target) == TagMatcher::Arrival::kMatched);
  CHECK(target.request == 10);
  CHECK(matcher.posted_count() == 0);
}

TEST_CASE("a message arriving before its receive waits for it, copied", "[unit]") {
  TagMatcher matcher;
  ReceiveTarget target;
  {
    auto payload = bytes_of(7);
    CHECK(matcher.arrive({3, 0}, payload, target) == TagMatcher::Arrival::kUnexpected);
    payload.assign(payload.size(), std::byte{0});  // the matcher kept its own copy
  }
  CHECK(matcher.unexpected_count() == 1);
  auto posted = matcher.post(3, {11, 0});
  REQUIRE(posted.waiting);
  CHECK(*posted.waiting == bytes_of(7));
  CHECK(matcher.unexpected_count() == 0);
  CHECK(matcher.posted_count() == 0);
}

TEST_CASE("per-tag order holds when a tag's messages arrive out of order", "[unit]") {
  TagMatcher matcher;
  matcher.post(4, {1, 0});  // seq 0
  matcher.post(4, {2, 0});  // seq 1
  ReceiveTarget target;
  CHECK(matcher.arrive({4, 1}, bytes_of(2), target) == TagMatcher::Arrival::kMatched);
  CHECK(target.request == 2);  // the second receive, though it arrived first
  CHECK(matcher.arrive({4, 0}, bytes_of(1), target) == TagMatcher::Arrival::kMatched);
  CHECK(target.request == 1);
}

TEST_CASE("a group of 8 buffers with mixed tags takes each tag's messages in order", "[unit]") {
  TagMatcher matcher;
  // tags 1,2,1,2,3,3,3,1 in one group: seqs per tag 0,0,1,1,0,1,2,2
  const std::vector<uint64_t> tags = {1, 2, 1, 2, 3, 3, 3, 1};
  std::vector<TagKey> keys;
  for (size_t i = 0; i < tags.size(); ++i) keys.push_back(matcher.post(tags[i], {1, i}).key);
  CHECK(keys ==
        std::vector<TagKey>{{1, 0}, {2, 0}, {1, 1}, {2, 1}, {3, 0}, {3, 1}, {3, 2}, {1, 2}});
  // The sender's messages arrive tag 3 first, then 1, then 2.
  std::vector<size_t> filled;
  for (TagKey key :
       std::vector<TagKey>{{3, 0}, {3, 1}, {3, 2}, {1, 0}, {1, 1}, {1, 2}, {2, 0}, {2, 1}}) {
    ReceiveTarget target;
    REQUIRE(matcher.arrive(key, bytes_of(0), target) == TagMatcher::Arrival::kMatched);
    filled.push_back(target.index);
  }
  CHECK(filled == std::vector<size_t>{4, 5, 6, 0, 2, 7, 1, 3});
}

TEST_CASE("a message delivered once is refused the second time", "[unit]") {
  TagMatcher matcher;
  matcher.post(6, {1, 0});
  ReceiveTarget target;
  REQUIRE(matcher.arrive({6, 0}, bytes_of(1), target) == TagMatcher::Arrival::kMatched);
  CHECK(matcher.arrive({6, 0}, bytes_of(1), target) == TagMatcher::Arrival::kDuplicate);
  // An early message that arrives twice before its receive is refused too.
  CHECK(matcher.arrive({6, 5}, bytes_of(1), target) == TagMatcher::Arrival::kUnexpected);
  CHECK(matcher.arrive({6, 5}, bytes_of(1), target) == TagMatcher::Arrival::kDuplicate);
}

TEST_CASE("take hands a posted receive to data that came by rendezvous", "[unit]") {
  TagMatcher matcher;
  matcher.post(8, {3, 2});
  auto taken = matcher.take({8, 0});
  REQUIRE(taken);
  CHECK(taken->index == 2);
  CHECK_FALSE(matcher.take({8, 0}));
  ReceiveTarget target;
  CHECK(matcher.arrive({8, 0}, bytes_of(1), target) == TagMatcher::Arrival::kDuplicate);
}
