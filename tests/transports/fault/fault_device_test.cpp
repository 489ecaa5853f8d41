// The fault decorator over a real transport (libfabric tcp): what each fault does to the
// completions and posts of the endpoint it wraps, and what it records.
#include "faultline/transports/fault/fault_device.hpp"

#include <catch2/catch.hpp>

#include "support/status_assertions.hpp"
#include "support/transport_pair.hpp"

using namespace faultline;
using namespace faultline::transports;
using namespace faultline::transports::fault;
using faultline::testing::make_buffer;
using faultline::testing::ofi_tcp;
using faultline::testing::open_device;
using namespace std::chrono_literals;

namespace {

// A wrapped sender and a plain receiver, connected, with one registered buffer each.
struct FaultedPair {
  std::shared_ptr<FaultLog> log = std::make_shared<FaultLog>();
  std::unique_ptr<Device> sender_device;
  std::unique_ptr<Device> receiver_device;
  std::unique_ptr<Endpoint> sender;
  std::unique_ptr<Endpoint> receiver;
  faultline::transports::RegisteredBuffer tx;
  faultline::transports::RegisteredBuffer rx;

  explicit FaultedPair(FaultPlan plan, const EndpointConfig& config = {})
      : sender_device(wrap_device(open_device(ofi_tcp()), std::move(plan), log)),
        receiver_device(open_device(ofi_tcp())) {
    auto s = sender_device->create_endpoint(config);
    auto r = receiver_device->create_endpoint(config);
    REQUIRE_OK(s);
    REQUIRE_OK(r);
    sender = std::move(s).value();
    receiver = std::move(r).value();
    REQUIRE_OK(sender->connect(receiver->address()));
    REQUIRE_OK(receiver->connect(sender->address()));
    tx = make_buffer(*sender_device, 64 * 8, kAccessAll);
    rx = make_buffer(*receiver_device, 64 * 8, kAccessAll);
  }

  // Sends message `i` (64 bytes) into the receive posted for it.
  void send(uint64_t i) {
    Segment into = rx.segment(i * 64, 64);
    REQUIRE_OK(receiver->post_recv({100 + i, {&into, 1}}));
    Segment from = tx.segment(i * 64, 64);
    REQUIRE_OK(sender->post_send({.wr_id = i, .op = Opcode::kSend, .segments = {&from, 1}}));
  }

  // The sender's completions until none came for `quiet`, driving the receiver too.
  std::vector<Completion> sender_completions(std::chrono::milliseconds quiet = 300ms) {
    std::vector<Completion> got;
    auto last = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - last < quiet) {
      Completion c[4];
      auto polled = sender->poll(c, 5ms);
      REQUIRE_OK(polled);
      for (size_t i = 0; i < polled.value(); ++i) got.push_back(c[i]);
      if (polled.value() > 0) last = std::chrono::steady_clock::now();
      (void)receiver->poll(c, 0ms);
    }
    return got;
  }
};

std::vector<uint64_t> wr_ids(const std::vector<Completion>& completions) {
  std::vector<uint64_t> ids;
  for (const auto& c : completions) ids.push_back(c.wr_id);
  return ids;
}

// A decorator plan from faults of the language, as a scenario file writes them.
FaultPlan plan_of(std::initializer_list<nlohmann::json> faults, uint64_t seed = 0) {
  FaultPlan plan;
  plan.seed = seed;
  for (const auto& fault : faults) {
    auto parsed = parse_fault(fault, kDecorator, "test");
    INFO(fault.dump());
    REQUIRE(parsed.ok());
    plan.faults.push_back(std::move(parsed).value());
  }
  return plan;
}

}  // namespace

TEST_CASE("rewrite_status fires on the nth matching completion only, and is recorded",
          "[integration][ofi]") {
  FaultedPair pair(plan_of({{{"kind", "rewrite_status"},
                             {"opcode", "SEND"},
                             {"nth", 2},
                             {"status", "REM_ACCESS_ERR"}}}));
  for (uint64_t i = 0; i < 3; ++i) pair.send(i);
  const auto got = pair.sender_completions();
  REQUIRE(got.size() == 3);
  CHECK(got[0].status == CompletionStatus::kSuccess);
  CHECK(got[1].status == CompletionStatus::kRemAccessErr);
  CHECK(got[1].native_text == "injected by faultline");
  CHECK(got[2].status == CompletionStatus::kSuccess);
  REQUIRE(pair.log->size() == 1);
  CHECK(pair.log->at(0).kind == "rewrite_status");
  CHECK_THAT(pair.log->at(0).detail,
             Catch::Contains("SEND wr_id 0x1 (2nd match): SUCCESS -> REM_ACCESS_ERR"));
}

TEST_CASE("drop, duplicate and delay change which completions come and when",
          "[integration][ofi]") {
  FaultedPair pair(plan_of({
      {{"kind", "drop_completion"}, {"opcode", "SEND"}, {"nth", 1}},
      {{"kind", "duplicate_completion"}, {"opcode", "SEND"}, {"nth", 2}},
      {{"kind", "delay_completion"}, {"opcode", "SEND"}, {"nth", 3}, {"delay_ms", 400}},
  }));
  for (uint64_t i = 0; i < 4; ++i) pair.send(i);
  const auto got = pair.sender_completions(800ms);
  // 0 dropped, 1 twice, 3 before the delayed 2.
  CHECK(wr_ids(got) == std::vector<uint64_t>{1, 1, 3, 2});
  CHECK(pair.log->size() == 3);
}

TEST_CASE("fail_post fails the nth post with its errno, named", "[integration][ofi]") {
  FaultedPair pair(plan_of({{{"kind", "fail_post"}, {"post", "send"}, {"nth", 2}, {"errno", 12}}}));
  pair.send(0);
  Segment from = pair.tx.segment(64, 64);
  Status second = pair.sender->post_send({.wr_id = 1, .op = Opcode::kSend, .segments = {&from, 1}});
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().sys_errno == 12);
  CHECK_THAT(second.error().describe(), Catch::Contains("post_send"));
  CHECK_THAT(second.error().describe(), Catch::Contains("the 2nd post_send fails"));
}

TEST_CASE("fail_post with an opcode counts and fails only posts of that opcode",
          "[integration][ofi]") {
  // Two sends, then a write: the write is the 1st RDMA_WRITE post, the sends are untouched.
  FaultedPair pair(
      plan_of({{{"kind", "fail_post"}, {"opcode", "RDMA_WRITE"}, {"nth", 1}, {"errno", 95}}}));
  pair.send(0);
  pair.send(1);
  Segment from = pair.tx.segment(0, 64);
  const RemoteBuffer remote = pair.rx.region->remote();
  Status write = pair.sender->post_send(
      {.wr_id = 2, .op = Opcode::kRdmaWrite, .segments = {&from, 1}, .remote = remote});
  REQUIRE_FALSE(write.ok());
  CHECK(write.error().sys_errno == 95);
  CHECK_THAT(write.error().describe(), Catch::Contains("the 1st post_send fails"));
}

TEST_CASE("nth counts on all of one side's endpoints together, not per endpoint",
          "[integration][ofi]") {
  // A ring's rank has two endpoints (measured: nth 3 fired twice, once on each).
  FaultedPair pair(plan_of(
      {{{"kind", "rewrite_status"}, {"opcode", "SEND"}, {"nth", 3}, {"status", "GENERAL_ERR"}}}));
  auto other = pair.sender_device->create_endpoint({});
  auto other_peer = pair.receiver_device->create_endpoint({});
  REQUIRE_OK(other);
  REQUIRE_OK(other_peer);
  REQUIRE_OK(other.value()->connect(other_peer.value()->address()));
  REQUIRE_OK(other_peer.value()->connect(other.value()->address()));
  // Three sends on each endpoint, in turn. The first endpoint's completions are polled first:
  // the side's 3rd is its 3rd (wr 4), and the second endpoint's 3rd is not faulted again.
  for (uint64_t i = 0; i < 3; ++i) {
    pair.send(2 * i);
    Segment into = pair.rx.segment((2 * i + 1) * 64, 64);
    REQUIRE_OK(other_peer.value()->post_recv({200 + i, {&into, 1}}));
    Segment from = pair.tx.segment((2 * i + 1) * 64, 64);
    REQUIRE_OK(other.value()->post_send(
        {.wr_id = 2 * i + 1, .op = Opcode::kSend, .segments = {&from, 1}}));
  }
  std::vector<uint64_t> failed;
  for (const auto& c : pair.sender_completions())
    if (!c.ok()) failed.push_back(c.wr_id);
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  size_t others = 0;
  while (others < 3 && std::chrono::steady_clock::now() < deadline) {
    Completion c[4];
    auto polled = other.value()->poll(c, 5ms);
    REQUIRE_OK(polled);
    for (size_t i = 0; i < polled.value(); ++i, ++others)
      if (!c[i].ok()) failed.push_back(c[i].wr_id);
    (void)other_peer.value()->poll(c, 0ms);
  }
  CHECK(others == 3);
  CHECK(failed == std::vector<uint64_t>{4});
  CHECK(pair.log->size() == 1);
}

TEST_CASE("segment_count posts one segment fewer, or the same bytes in more",
          "[integration][ofi]") {
  FaultedPair pair(
      plan_of({{{"kind", "segment_count"}, {"mode", "fewer"}, {"post", "send"}, {"nth", 1}},
               {{"kind", "segment_count"},
                {"mode", "split"},
                {"into", 4},
                {"post", "send"},
                {"nth", 2}}}),
      EndpointConfig{.max_send_sge = 4});
  // Two messages of two 32-byte segments: the first loses its second half, the second goes
  // in four segments of 16 bytes and arrives whole.
  for (uint64_t i = 0; i < 2; ++i) {
    Segment into = pair.rx.segment(i * 64, 64);
    REQUIRE_OK(pair.receiver->post_recv({100 + i, {&into, 1}}));
    Segment from[2] = {pair.tx.segment(i * 64, 32), pair.tx.segment(i * 64 + 32, 32)};
    REQUIRE_OK(pair.sender->post_send({.wr_id = i, .op = Opcode::kSend, .segments = from}));
  }
  std::vector<uint32_t> lengths;
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (lengths.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    Completion c[4];
    auto polled = pair.receiver->poll(c, 5ms);
    REQUIRE_OK(polled);
    for (size_t i = 0; i < polled.value(); ++i) lengths.push_back(c[i].byte_len);
    (void)pair.sender->poll(c, 0ms);
  }
  CHECK(lengths == std::vector<uint32_t>{32, 64});
  REQUIRE(pair.log->size() == 2);
  CHECK_THAT(pair.log->at(0).detail, Catch::Contains("1 segments instead of 2"));
  CHECK_THAT(pair.log->at(1).detail, Catch::Contains("4 segments instead of 2"));
}

TEST_CASE("rewrite_field changes one field of the matching sends only, counted among them",
          "[integration][ofi]") {
  // StepMesh's rendezvous: an 8-byte data_num at offset 8 of a 64-byte message. Minus one on
  // the 2nd message whose field holds 3 (messages whose field holds 2 are not counted).
  FaultedPair pair(plan_of({{{"kind", "rewrite_field"},
                             {"offset", 8},
                             {"width", 8},
                             {"minus_one", true},
                             {"equals", 3},
                             {"length", 64},
                             {"nth", 2}}}));
  const std::vector<uint64_t> sent = {3, 2, 3, 3};
  for (uint64_t i = 0; i < sent.size(); ++i) {
    std::memcpy(pair.tx.data() + i * 64 + 8, &sent[i], 8);
    pair.send(i);
  }
  CHECK(pair.sender_completions().size() == sent.size());
  std::vector<uint64_t> received;
  for (uint64_t i = 0; i < sent.size(); ++i) {
    uint64_t field = 0;
    std::memcpy(&field, pair.rx.data() + i * 64 + 8, 8);
    received.push_back(field);
  }
  CHECK(received == std::vector<uint64_t>{3, 2, 2, 3});
  REQUIRE(pair.log->size() == 1);
  CHECK(pair.log->at(0).kind == "rewrite_field");
  CHECK_THAT(pair.log->at(0).detail, Catch::Contains("field at offset 8 posted as 2 (was 3)") &&
                                         Catch::Contains("wr_id 0x2"));
}

TEST_CASE("replay returns a stale completion after the next connect", "[integration][ofi]") {
  FaultedPair pair(plan_of({{{"kind", "replay_completion"}, {"opcode", "SEND"}, {"nth", 1}}}));
  pair.send(0);
  CHECK(wr_ids(pair.sender_completions()) == std::vector<uint64_t>{0});
  REQUIRE_OK(pair.sender->connect(pair.receiver->address()));
  CHECK(wr_ids(pair.sender_completions()) == std::vector<uint64_t>{0});
  CHECK(pair.log->back().kind == "replay_completion");
}

TEST_CASE("the same seed fires the same probabilistic faults", "[integration][ofi]") {
  auto statuses = [](uint64_t seed) {
    FaultedPair pair(plan_of({{{"kind", "rewrite_status"},
                               {"opcode", "SEND"},
                               {"probability", 0.5},
                               {"status", "GENERAL_ERR"}}},
                             seed));
    for (uint64_t i = 0; i < 8; ++i) pair.send(i);
    std::vector<bool> failed;
    for (const auto& c : pair.sender_completions()) failed.push_back(!c.ok());
    return failed;
  };
  const auto first = statuses(7);
  CHECK(first.size() == 8);
  CHECK(first == statuses(7));
}

TEST_CASE("limits overrides are what the device reports and what endpoints are checked against",
          "[integration][ofi]") {
  FaultPlan plan = plan_of({{{"kind", "limits"}, {"max_qp_wr", 100}, {"max_cqe", 64}}});
  plan.faults[0].caps.source = "a test";
  auto log = std::make_shared<FaultLog>();
  auto device = wrap_device(open_device(ofi_tcp()), plan, log);
  CHECK(device->info().limits.max_qp_wr == 100);
  CHECK(device->info().limits.max_cqe == 64U);
  EndpointConfig config;
  config.send_depth = 101;
  auto refused = device->create_endpoint(config);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::kLimitExceeded);
  CHECK_THAT(refused.error().message, Catch::Contains("send_depth 101"));
  CHECK_THAT(refused.error().hint, Catch::Contains("a test"));
  config.send_depth = 16;
  config.recv_depth = 16;
  CHECK(device->create_endpoint(config).ok());
  REQUIRE(log->size() == 2);
  const uint32_t advertised = open_device(ofi_tcp())->info().limits.max_qp_wr;
  // In the order of the limit table.
  CHECK_THAT((*log)[0].detail,
             Catch::Contains("max_qp_wr 100 from a test instead of " + std::to_string(advertised)));
  CHECK_THAT((*log)[1].detail, Catch::Contains("max_cqe 64 from a test instead of no limit"));
}

TEST_CASE("a limits override above the device's own limit says the device's still applies",
          "[integration][ofi]") {
  FaultPlan plan = plan_of({{{"kind", "limits"}, {"max_qp_wr", 1000000}}});
  plan.faults[0].caps.source = "a test";
  auto log = std::make_shared<FaultLog>();
  auto device = wrap_device(open_device(ofi_tcp()), plan, log);
  const uint32_t advertised = open_device(ofi_tcp())->info().limits.max_qp_wr;
  CHECK(device->info().limits.max_qp_wr == 1000000);  // the emulated device's
  REQUIRE(log->size() == 1);
  // Once "instead of what tcp advertises": the device's own limit still refused the endpoint.
  CHECK_THAT((*log)[0].detail,
             Catch::Contains("in addition to the " + std::to_string(advertised)) &&
                 Catch::Contains("which still applies"));
  EndpointConfig config;
  config.send_depth = advertised + 1;
  CHECK_FALSE(device->create_endpoint(config).ok());  // refused by the device itself
}
