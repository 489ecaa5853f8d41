// The tagged engine over real transports: a sender and a receiver on two endpoints, each in
// its own thread as it would be in its own process.
#include "faultline/protocols/tagged/tagged_engine.hpp"

#include <catch2/catch.hpp>
#include <future>
#include <thread>

#include "support/status_assertions.hpp"
#include "support/transport_pair.hpp"

using namespace faultline::protocols::tagged;
using faultline::ErrorCode;
using faultline::Status;
using faultline::testing::TransportPair;
using faultline::transports::Target;
using RequestId = TaggedEngine::RequestId;

namespace {

faultline::transports::EndpointConfig endpoint_config() {
  faultline::transports::EndpointConfig config;
  config.send_depth = 64;
  config.recv_depth = 64;
  return config;
}

struct TaggedPair {
  TransportPair pair;
  std::unique_ptr<TaggedEngine> sender;
  std::unique_ptr<TaggedEngine> receiver;

  explicit TaggedPair(const Target& target, TaggedOptions options = {})
      : pair(target, endpoint_config()) {
    options.side = "sender";
    auto a = TaggedEngine::create(pair.device_a(), pair.a(), options);
    options.side = "receiver";
    auto b = TaggedEngine::create(pair.device_b(), pair.b(), options);
    REQUIRE_OK(a);
    REQUIRE_OK(b);
    sender = std::move(a).value();
    receiver = std::move(b).value();
  }
};

// The bytes of the seq-th message of a tag: what each side computes on its own.
std::vector<std::byte> message(uint64_t tag, uint64_t seq, size_t bytes) {
  std::vector<std::byte> data(bytes);
  faultline::transports::fill_pattern(data.data(), bytes, static_cast<unsigned>(tag * 1000 + seq));
  return data;
}

struct Outgoing {
  uint64_t tag;
  size_t bytes;
};

// What both sides know of the traffic: each side numbers a tag's messages on its own, and
// the sizes the sender used, to check the receiver against once both are done.
struct Traffic {
  std::map<uint64_t, uint64_t> send_seqs;
  std::map<uint64_t, uint64_t> receive_seqs;
  std::map<std::pair<uint64_t, uint64_t>, size_t> sizes;
};

// Sends every message in order (payloads kept alive until done) and waits for all.
Status send_all(TaggedEngine& engine, const std::vector<Outgoing>& messages, Traffic& traffic,
                std::vector<RequestId>* ids = nullptr) {
  std::vector<std::vector<std::byte>> payloads;
  std::vector<RequestId> sent;
  payloads.reserve(messages.size());
  for (const Outgoing& out : messages) {
    const uint64_t seq = traffic.send_seqs[out.tag]++;
    traffic.sizes[{out.tag, seq}] = out.bytes;
    payloads.push_back(message(out.tag, seq, out.bytes));
    auto id = engine.send(out.tag, payloads.back());
    if (!id.ok()) return id.error();
    sent.push_back(id.value());
  }
  Status done = engine.wait(sent);
  if (ids != nullptr) *ids = sent;
  return done;
}

// A grouped receive of `tags`, each buffer `capacity` bytes.
struct Group {
  std::vector<uint64_t> tags;
  std::vector<std::vector<std::byte>> buffers;
  std::vector<uint64_t> seqs;
  RequestId id = 0;
};

Group post_group(TaggedEngine& engine, const std::vector<uint64_t>& tags, size_t capacity,
                 Traffic& traffic) {
  Group group{tags, {}, {}, 0};
  std::vector<TaggedBuffer> buffers;
  group.buffers.reserve(tags.size());
  for (uint64_t tag : tags) {
    group.buffers.emplace_back(capacity);
    group.seqs.push_back(traffic.receive_seqs[tag]++);
    buffers.push_back({tag, group.buffers.back()});
  }
  auto id = engine.receive(buffers);
  REQUIRE_OK(id);
  group.id = id.value();
  return group;
}

// Each buffer holds exactly the message of its tag and place in that tag's order.
void check_group(const TaggedEngine& engine, const Group& group, const Traffic& traffic) {
  const auto lengths = engine.received_lengths(group.id);
  REQUIRE(lengths.size() == group.tags.size());
  for (size_t i = 0; i < group.tags.size(); ++i) {
    const size_t bytes = traffic.sizes.at({group.tags[i], group.seqs[i]});
    CAPTURE(i, group.tags[i], group.seqs[i], bytes);
    REQUIRE(lengths[i] == bytes);
    const auto expected = message(group.tags[i], group.seqs[i], bytes);
    CHECK(std::equal(expected.begin(), expected.end(), group.buffers[i].begin()));
  }
}

std::vector<Target> ofi_targets() {
  return {faultline::testing::ofi_tcp(), faultline::testing::ofi_shm()};
}

void eager_boundary(const Target& target) {
  const size_t threshold = 8184;
  TaggedPair tagged(target, {.eager_threshold = threshold});
  // Sent before any receive is posted: the eager ones complete at once, and the receiver
  // keeps them until it posts; the one above the threshold waits for the receiver's buffer.
  const std::vector<Outgoing> messages = {{1, threshold - 1}, {2, threshold}, {3, threshold + 1}};
  Traffic traffic;
  std::vector<RequestId> sent;
  auto sending = std::async(std::launch::async,
                            [&] { return send_all(*tagged.sender, messages, traffic, &sent); });
  // The receiver takes the two eager frames in before posting anything.
  for (int i = 0; i < 400 && tagged.receiver->stats().unexpected < 2; ++i) {
    REQUIRE_OK(tagged.receiver->progress());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(tagged.receiver->stats().unexpected == 2);
  Group group = post_group(*tagged.receiver, {1, 2, 3}, threshold + 1, traffic);
  const RequestId ids[] = {group.id};
  REQUIRE_OK(tagged.receiver->wait(ids));
  REQUIRE_OK(sending.get());
  check_group(*tagged.receiver, group, traffic);
  CHECK(tagged.sender->path_of(sent[0]) == SendPath::kEager);
  CHECK(tagged.sender->path_of(sent[1]) == SendPath::kEager);
  CHECK(tagged.sender->path_of(sent[2]) == SendPath::kRendezvous);
  CHECK(tagged.sender->stats().eager_sent == 2);
  CHECK(tagged.sender->stats().rendezvous_sent == 1);
  CHECK(tagged.receiver->stats().rendezvous_received == 1);
}

void eager_queue_full(const Target& target) {
  TaggedPair tagged(target, {.eager_queue_depth = 4, .receive_slots = 8});
  std::vector<Outgoing> messages;
  for (size_t i = 0; i < 40; ++i) messages.push_back({i % 3, 100 + i});
  Traffic traffic;
  auto sending =
      std::async(std::launch::async, [&] { return send_all(*tagged.sender, messages, traffic); });
  // The receiver does nothing for a while: the sender runs out of slots, fills its queue and
  // backs off instead of dropping or overrunning the receiver.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<Group> groups;
  std::vector<RequestId> ids;
  for (const Outgoing& out : messages) {
    groups.push_back(post_group(*tagged.receiver, {out.tag}, 200, traffic));
    ids.push_back(groups.back().id);
  }
  REQUIRE_OK(tagged.receiver->wait(ids));
  REQUIRE_OK(sending.get());
  for (const Group& group : groups) check_group(*tagged.receiver, group, traffic);
  CHECK(tagged.sender->stats().backoffs >= 1);
  CHECK(tagged.sender->stats().eager_queue_high_water == 4);
  CHECK(tagged.sender->stats().eager_sent == 40);
}

void grouped_receives(const Target& target) {
  TaggedPair tagged(target, {.eager_threshold = 1024});
  Traffic traffic;
  for (size_t n = 1; n <= 8; ++n) {
    for (bool mixed : {false, true}) {
      CAPTURE(target.label(), n, mixed);
      std::vector<uint64_t> tags;
      for (size_t i = 0; i < n; ++i) tags.push_back(mixed ? 10 + i % 3 : 10);
      // The sender goes backwards through the group, alternating eager and rendezvous.
      std::vector<Outgoing> messages;
      for (size_t i = n; i > 0; --i) messages.push_back({tags[i - 1], i % 2 ? 512U : 4000U});
      Group group = post_group(*tagged.receiver, tags, 4000, traffic);
      auto sending = std::async(std::launch::async,
                                [&] { return send_all(*tagged.sender, messages, traffic); });
      const RequestId ids[] = {group.id};
      REQUIRE_OK(tagged.receiver->wait(ids));
      REQUIRE_OK(sending.get());
      check_group(*tagged.receiver, group, traffic);
    }
  }
}

void interleaved_groups(const Target& target) {
  TaggedPair tagged(target, {.eager_threshold = 1024});
  Traffic traffic;
  // Two groups over the same four tags; the sender alternates between them message by
  // message, so the first message of each tag belongs to the first group.
  Group first = post_group(*tagged.receiver, {1, 2, 3, 4}, 8192, traffic);
  Group second = post_group(*tagged.receiver, {4, 3, 2, 1}, 8192, traffic);
  const std::vector<Outgoing> messages = {{1, 100},  {4, 5000}, {2, 6000}, {3, 200},
                                          {3, 7000}, {2, 300},  {4, 400},  {1, 8000}};
  auto sending =
      std::async(std::launch::async, [&] { return send_all(*tagged.sender, messages, traffic); });
  const RequestId ids[] = {second.id, first.id};
  REQUIRE_OK(tagged.receiver->wait(ids));
  REQUIRE_OK(sending.get());
  check_group(*tagged.receiver, first, traffic);
  check_group(*tagged.receiver, second, traffic);
}

}  // namespace

TEST_CASE("eager at the threshold - 1 and the threshold, rendezvous one byte over",
          "[integration][ofi]") {
  for (const auto& target : ofi_targets()) {
    CAPTURE(target.label());
    eager_boundary(target);
  }
}

TEST_CASE("more eager sends than the queue holds back off and lose nothing", "[integration][ofi]") {
  for (const auto& target : ofi_targets()) {
    CAPTURE(target.label());
    eager_queue_full(target);
  }
}

TEST_CASE("grouped receives of 1 to 8 buffers, one tag and mixed tags, eager and rendezvous",
          "[integration][ofi]") {
  for (const auto& target : ofi_targets()) grouped_receives(target);
}

TEST_CASE("interleaved sends across two groups of the same tags keep per-tag order",
          "[integration][ofi]") {
  for (const auto& target : ofi_targets()) {
    CAPTURE(target.label());
    interleaved_groups(target);
  }
}

TEST_CASE("the tagged engine over verbs: eager boundary, full queue, groups, interleaving",
          "[integration][verbs]") {
  const Target target = faultline::testing::verbs_device();
  eager_boundary(target);
  eager_queue_full(target);
  grouped_receives(target);
  interleaved_groups(target);
}

TEST_CASE("a message larger than its receive buffer fails on both sides, eager or not",
          "[integration][ofi]") {
  TaggedPair tagged(faultline::testing::ofi_tcp(), {.eager_threshold = 1024});
  Traffic traffic;
  Group small = post_group(*tagged.receiver, {5, 6}, 256, traffic);
  const std::vector<Outgoing> messages = {{5, 512}, {6, 4096}};
  std::vector<RequestId> sent;
  auto sending = std::async(std::launch::async,
                            [&] { return send_all(*tagged.sender, messages, traffic, &sent); });
  const RequestId ids[] = {small.id};
  const Status received = tagged.receiver->wait(ids);
  const Status sender_status = sending.get();
  REQUIRE_FALSE(received.ok());
  CHECK(received.error().code == ErrorCode::kProtocolViolation);
  CHECK_THAT(received.error().message, Catch::Contains("does not fit"));
  REQUIRE_FALSE(sender_status.ok());  // the rendezvous one: the sender saw the buffer's size
  CHECK_THAT(sender_status.error().message, Catch::Contains("4096 bytes (tag 6 seq 0)"));
  CHECK_THAT(sender_status.error().message, Catch::Contains("256-byte buffer"));
}

TEST_CASE("a receive nobody sends to times out naming what it still waits for",
          "[integration][ofi]") {
  TaggedPair tagged(faultline::testing::ofi_tcp(), {.timeout = std::chrono::milliseconds(300)});
  Traffic traffic;
  Group lonely = post_group(*tagged.receiver, {7, 7, 9}, 64, traffic);
  const RequestId ids[] = {lonely.id};
  const Status waited = tagged.receiver->wait(ids);
  REQUIRE_FALSE(waited.ok());
  CHECK(waited.error().code == ErrorCode::kTimeout);
  CHECK_THAT(waited.error().message,
             Catch::Contains("receive of tag 7 seq 0 tag 7 seq 1 tag 9 seq 0 (no data yet)"));
  CHECK_FALSE(waited.error().hint.empty());
}

TEST_CASE("a group of none or of more than 8 buffers is refused", "[integration][ofi]") {
  TaggedPair tagged(faultline::testing::ofi_tcp());
  std::vector<std::byte> buffer(8);
  CHECK(tagged.receiver->receive({}).error().code == ErrorCode::kInvalidArgument);
  std::vector<TaggedBuffer> nine(9, TaggedBuffer{1, buffer});
  auto refused = tagged.receiver->receive(nine);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("1 to 8 buffers, not 9"));
}
