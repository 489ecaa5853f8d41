// The kv engine over real transports: a worker and a server on two endpoints, the server in
// its own thread as it would be in its own process.
#include <catch2/catch.hpp>
#include <future>

#include "faultline/protocols/kv/kv_store.hpp"
#include "support/status_assertions.hpp"
#include "support/transport_pair.hpp"

using namespace faultline::protocols::kv;
using faultline::ErrorCode;
using faultline::testing::TransportPair;
using faultline::transports::Target;

namespace {

KeyValues make_values(size_t keys, size_t bytes, unsigned seed) {
  KeyValues values;
  for (size_t i = 0; i < keys; ++i) {
    auto& value = values[i * 7 + 1];
    value.resize(bytes + i);  // lengths differ per key
    faultline::transports::fill_pattern(value.data(), value.size(),
                                        seed + static_cast<unsigned>(i));
  }
  return values;
}

std::vector<uint64_t> keys_of(const KeyValues& values) {
  std::vector<uint64_t> keys;
  for (const auto& [key, _] : values) keys.push_back(key);
  return keys;
}

struct KvPair {
  TransportPair pair;
  std::unique_ptr<Rendezvous> worker_side;
  std::unique_ptr<Rendezvous> server_side;

  explicit KvPair(const Target& target, const faultline::transports::EndpointConfig& config = {})
      : pair(target, config) {
    auto worker = Rendezvous::create(pair.device_a(), pair.a(), {.side = "worker"});
    auto server = Rendezvous::create(pair.device_b(), pair.b(), {.side = "server"});
    REQUIRE_OK(worker);
    REQUIRE_OK(server);
    worker_side = std::move(worker).value();
    server_side = std::move(server).value();
  }
};

std::string joined(const std::vector<std::string>& events) {
  std::string text;
  for (const auto& event : events) text += event + "; ";
  return text;
}

void push_then_pull(const Target& target) {
  KvPair kv(target);
  KvServer server(*kv.server_side);
  auto serving = std::async(std::launch::async, [&] { return server.serve(2); });
  KvWorker worker(*kv.worker_side);
  const KeyValues pushed = make_values(64, 4096, 3);
  REQUIRE_OK(worker.push(pushed));
  auto pulled = worker.pull(keys_of(pushed));
  REQUIRE_OK(serving.get());
  REQUIRE_OK(pulled);
  CHECK(pulled.value() == pushed);
  CHECK(server.violations().empty());
}

}  // namespace

TEST_CASE("kv push then pull returns what was pushed over tcp and shm", "[integration][ofi]") {
  for (const auto& target : {faultline::testing::ofi_tcp(), faultline::testing::ofi_shm()}) {
    CAPTURE(target.label());
    push_then_pull(target);
  }
}

TEST_CASE("kv push then pull returns what was pushed over verbs", "[integration][verbs]") {
  push_then_pull(faultline::testing::verbs_device());
}

TEST_CASE("a PushRequest without lens is rejected by the server, which keeps serving",
          "[integration][ofi]") {
  KvPair kv(faultline::testing::ofi_tcp());
  KvServer server(*kv.server_side);
  auto serving = std::async(std::launch::async, [&] { return server.serve(3); });
  KvWorker worker(*kv.worker_side);
  const KeyValues pushed = make_values(8, 64, 1);
  kv.worker_side->set_mutations(
      {{Mutation::Kind::kDropSegment, MessageType::kPushRequest, "lens"}});
  auto missing_lens = worker.push(pushed);
  REQUIRE_FALSE(missing_lens.ok());
  CHECK(missing_lens.error().code == ErrorCode::kProtocolViolation);
  CHECK_THAT(
      missing_lens.error().message,
      Catch::Contains("PushRequest: segment count expected 3, actual 2 (detected by server)"));
  kv.worker_side->set_mutations({});
  REQUIRE_OK(worker.push(pushed));
  auto pulled = worker.pull(keys_of(pushed));
  REQUIRE_OK(serving.get());
  REQUIRE_OK(pulled);
  CHECK(pulled.value() == pushed);
  REQUIRE(server.violations().size() == 1);
  CHECK_THAT(server.violations()[0], Catch::Contains("expected 3, actual 2"));
}

TEST_CASE("a PullResponse without lens is caught by the worker", "[integration][ofi]") {
  KvPair kv(faultline::testing::ofi_shm());
  kv.server_side->set_mutations(
      {{Mutation::Kind::kDropSegment, MessageType::kPullResponse, "lens"}});
  KvServer server(*kv.server_side);
  auto serving = std::async(std::launch::async, [&] { return server.serve(2); });
  KvWorker worker(*kv.worker_side);
  const KeyValues pushed = make_values(4, 32, 9);
  REQUIRE_OK(worker.push(pushed));
  auto pulled = worker.pull(keys_of(pushed));
  REQUIRE_FALSE(pulled.ok());
  CHECK_THAT(
      pulled.error().message,
      Catch::Contains("PullResponse: segment count expected 3, actual 2 (detected by worker)"));
  // The server learns of the rejection when its send of the PullResponse is refused.
  auto served = serving.get();
  CHECK(served.ok());
  CHECK(server.violations().size() == 1);
}

TEST_CASE("corrupted headers and reordered segments are violations, not crashes",
          "[integration][ofi]") {
  KvPair kv(faultline::testing::ofi_tcp());
  KvServer server(*kv.server_side);
  auto serving = std::async(std::launch::async, [&] { return server.serve(3); });
  KvWorker worker(*kv.worker_side);
  const KeyValues pushed = make_values(4, 4096, 2);
  kv.worker_side->set_mutations(
      {{Mutation::Kind::kCorruptHeader, MessageType::kPushRequest, "magic"}});
  auto magic = worker.push(pushed);
  CHECK_THAT(magic.error().message, Catch::Contains("header magic"));
  kv.worker_side->set_mutations(
      {{Mutation::Kind::kReorderSegments, MessageType::kPushRequest, ""}});
  auto reordered = worker.push(pushed);
  CHECK_THAT(reordered.error().message, Catch::Contains("PushRequest: keys length"));
  kv.worker_side->set_mutations({{Mutation::Kind::kAddSegment, MessageType::kPushRequest, ""}});
  auto added = worker.push(pushed);
  CHECK_THAT(added.error().message, Catch::Contains("segment count expected 3, actual 4"));
  REQUIRE_OK(serving.get());
  CHECK(server.violations().size() == 3);
}

TEST_CASE(
    "the StepMesh sequence: a PushRequest that outgrows its inline plan fails at the post, and "
    "with inline off the server names the broken contract",
    "[integration][ofi]") {
  const KeyValues pushed = make_values(4, 256, 5);
  for (const auto& target : {faultline::testing::ofi_tcp(), faultline::testing::ofi_shm()}) {
    CAPTURE(target.label());
    {  // inline granted: the three-segment announce (64 bytes) is posted inline
      KvPair kv(target, {.max_inline = 64});
      KvServer server(*kv.server_side);
      auto serving = std::async(std::launch::async, [&] { return server.serve(1); });
      KvWorker worker(*kv.worker_side);
      REQUIRE_OK(worker.push(pushed));
      REQUIRE_OK(serving.get());
      CHECK_THAT(joined(kv.worker_side->events()),
                 Catch::Contains("announced PushRequest with 3 segments inline"));
      kv.worker_side->set_mutations({{Mutation::Kind::kAddSegment, MessageType::kPushRequest, ""}});
      auto added = worker.push(pushed);
      REQUIRE_FALSE(added.ok());
      CHECK(added.error().code == ErrorCode::kLimitExceeded);
      CHECK_THAT(added.error().message,
                 Catch::Contains("announce of PushRequest (80 bytes, posted inline)") &&
                     Catch::Contains("80 bytes exceeds the granted max_inline 64"));
      CHECK_THAT(added.error().hint, Catch::Contains("breaks the PushRequest contract"));
      CHECK(server.violations().empty());
    }
    {  // inline off: the same message reaches the server, whose contract check fires
      KvPair kv(target, {.max_inline = 0});
      KvServer server(*kv.server_side);
      auto serving = std::async(std::launch::async, [&] { return server.serve(1); });
      KvWorker worker(*kv.worker_side);
      kv.worker_side->set_mutations({{Mutation::Kind::kAddSegment, MessageType::kPushRequest, ""}});
      auto added = worker.push(pushed);
      REQUIRE_FALSE(added.ok());
      CHECK(added.error().code == ErrorCode::kProtocolViolation);
      CHECK_THAT(added.error().message,
                 Catch::Contains("segment count expected 3, actual 4 (detected by server)"));
      REQUIRE_OK(serving.get());
      CHECK_THAT(joined(kv.worker_side->events()), !Catch::Contains(" inline"));
    }
  }
}
