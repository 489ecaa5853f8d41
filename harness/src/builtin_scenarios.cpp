#include "faultline/harness/builtin_scenarios.hpp"

#include <csignal>
#include <cstdlib>
#include <thread>

#include "faultline/core/hex.hpp"
#include "faultline/transports/data_pattern.hpp"
#include "faultline/transports/json.hpp"
#include "faultline/transports/memory_provider.hpp"
#include "faultline/transports/registered_buffer.hpp"
#include "faultline/transports/registry.hpp"

namespace faultline::harness {

namespace {

using namespace transports;
using namespace std::chrono_literals;

ScenarioOutcome harness_error(const Error& error) {
  return {Verdict::kError, "", "", error.describe(), error.hint};
}

ScenarioOutcome failure(std::string expected, std::string observed, std::string evidence,
                        std::string hint = {}) {
  return {Verdict::kFail, std::move(expected), std::move(observed), std::move(evidence),
          std::move(hint)};
}

Result<transports::RegisteredBuffer> make_buffer(Device& device, size_t length) {
  return transports::RegisteredBuffer::allocate(device, length, kAccessAll);
}

// The next completion, which must be a success of `op`; anything else is the scenario's
// failure, described.
std::optional<ScenarioOutcome> expect_completion(Endpoint& endpoint, Opcode op, uint32_t byte_len,
                                                 std::chrono::milliseconds timeout) {
  Completion completion;
  auto polled = endpoint.poll({&completion, 1}, timeout);
  if (!polled.ok()) return harness_error(polled.error());
  const std::string expected =
      std::string(to_string(op)) + " SUCCESS" +
      (op == Opcode::kRecv ? " of " + std::to_string(byte_len) + " bytes" : "");
  if (polled.value() == 0) {
    return failure(expected, "no completion within " + std::to_string(timeout.count()) + " ms", "");
  }
  if (!completion.ok() || completion.op != op ||
      (op == Opcode::kRecv && completion.byte_len != byte_len)) {
    return failure(
        expected,
        std::string(to_string(completion.op)) + " " + std::string(to_string(completion.status)),
        completion.describe());
  }
  return std::nullopt;
}

constexpr size_t kLargest = 1 << 20;
constexpr std::array<size_t, 5> kSizes{1, 64, 4096, 65536, kLargest};

ScenarioOutcome pingpong(ScenarioContext& context) {
  auto device = open_target_device(context.target);
  if (!device.ok()) return harness_error(device.error());
  EndpointConfig config;
  config.send_depth = 16;
  config.recv_depth = 16;
  auto endpoint_result = device.value()->create_endpoint(config);
  if (!endpoint_result.ok()) return harness_error(endpoint_result.error());
  Endpoint& endpoint = *endpoint_result.value();
  auto send_buffer = make_buffer(*device.value(), kLargest);
  auto recv_buffer = make_buffer(*device.value(), kLargest);
  auto rdma_region = make_buffer(*device.value(), kLargest);
  for (auto* buffer : {&send_buffer, &recv_buffer, &rdma_region}) {
    if (!buffer->ok()) return harness_error(buffer->error());
  }

  auto peer = context.link.exchange(
      {{"address", to_hex(endpoint.address())}, {"region", rdma_region->region->remote()}});
  if (!peer.ok()) return harness_error(peer.error());
  RemoteBuffer peer_region;
  try {
    peer->at("region").get_to(peer_region);
    if (Status connected = endpoint.connect(from_hex(peer->at("address"))); !connected.ok()) {
      return harness_error(connected.error());
    }
  } catch (const nlohmann::json::exception& e) {
    return harness_error(
        Error{ErrorCode::kProtocolViolation, std::string("peer info: ") + e.what()});
  }

  const bool initiator = context.role == "initiator";
  Segment whole_recv = recv_buffer->segment(0, kLargest);
  auto repost = [&] { return endpoint.post_recv({1, {&whole_recv, 1}}); };
  if (Status posted = repost(); !posted.ok()) return harness_error(posted.error());
  if (Status ready = context.link.barrier("connected"); !ready.ok())
    return harness_error(ready.error());

  const auto timeout = 10s;
  for (size_t i = 0; i < kSizes.size(); ++i) {
    const size_t size = kSizes[i];
    const auto ping_seed = static_cast<unsigned>(2 * i + 1);
    const auto pong_seed = static_cast<unsigned>(2 * i + 2);
    Segment message = send_buffer->segment(0, size);
    if (initiator) {
      context.link.step("send " + std::to_string(size) + " B ping");
      fill_pattern(send_buffer->memory.get(), size, ping_seed);
      if (Status s =
              endpoint.post_send({.wr_id = i, .op = Opcode::kSend, .segments = {&message, 1}});
          !s.ok()) {
        return harness_error(s.error());
      }
      if (auto bad = expect_completion(endpoint, Opcode::kSend, 0, timeout)) return *bad;
      context.link.step("receive " + std::to_string(size) + " B pong");
      if (auto bad =
              expect_completion(endpoint, Opcode::kRecv, static_cast<uint32_t>(size), timeout))
        return *bad;
      if (size_t at = first_pattern_mismatch(recv_buffer->memory.get(), size, pong_seed);
          at != size) {
        return failure("pong of " + std::to_string(size) + " bytes as sent",
                       "byte " + std::to_string(at) + " differs", "send/recv data check");
      }
      if (Status s = repost(); !s.ok()) return harness_error(s.error());
    } else {
      context.link.step("receive " + std::to_string(size) + " B ping");
      if (auto bad =
              expect_completion(endpoint, Opcode::kRecv, static_cast<uint32_t>(size), timeout))
        return *bad;
      if (size_t at = first_pattern_mismatch(recv_buffer->memory.get(), size, ping_seed);
          at != size) {
        return failure("ping of " + std::to_string(size) + " bytes as sent",
                       "byte " + std::to_string(at) + " differs", "send/recv data check");
      }
      if (Status s = repost(); !s.ok()) return harness_error(s.error());
      context.link.step("send " + std::to_string(size) + " B pong");
      fill_pattern(send_buffer->memory.get(), size, pong_seed);
      if (Status s =
              endpoint.post_send({.wr_id = i, .op = Opcode::kSend, .segments = {&message, 1}});
          !s.ok()) {
        return harness_error(s.error());
      }
      if (auto bad = expect_completion(endpoint, Opcode::kSend, 0, timeout)) return *bad;
    }
  }

  // RDMA write of 1 MiB, then a 1-byte send that orders after it; the responder checks the
  // region and answers with one byte: 1 when the bytes are right.
  constexpr unsigned kWriteSeed = 99;
  Segment one_byte = send_buffer->segment(0, 1);
  if (initiator) {
    context.link.step("RDMA write 1 MiB");
    fill_pattern(send_buffer->memory.get(), kLargest, kWriteSeed);
    Segment all = send_buffer->segment(0, kLargest);
    if (Status s = endpoint.post_send(
            {.wr_id = 100, .op = Opcode::kRdmaWrite, .segments = {&all, 1}, .remote = peer_region});
        !s.ok()) {
      return harness_error(s.error());
    }
    if (auto bad = expect_completion(endpoint, Opcode::kRdmaWrite, 0, timeout)) return *bad;
    send_buffer->memory[0] = std::byte{0};
    if (Status s =
            endpoint.post_send({.wr_id = 101, .op = Opcode::kSend, .segments = {&one_byte, 1}});
        !s.ok()) {
      return harness_error(s.error());
    }
    if (auto bad = expect_completion(endpoint, Opcode::kSend, 0, timeout)) return *bad;
    context.link.step("receive the write check");
    if (auto bad = expect_completion(endpoint, Opcode::kRecv, 1, timeout)) return *bad;
    if (recv_buffer->memory[0] != std::byte{1}) {
      return failure("RDMA write of 1 MiB lands intact", "the responder found different bytes",
                     "RDMA write data check");
    }
  } else {
    context.link.step("wait for the RDMA write");
    if (auto bad = expect_completion(endpoint, Opcode::kRecv, 1, timeout)) return *bad;
    const size_t at = first_pattern_mismatch(rdma_region->memory.get(), kLargest, kWriteSeed);
    send_buffer->memory[0] = at == kLargest ? std::byte{1} : std::byte{0};
    if (Status s =
            endpoint.post_send({.wr_id = 102, .op = Opcode::kSend, .segments = {&one_byte, 1}});
        !s.ok()) {
      return harness_error(s.error());
    }
    if (auto bad = expect_completion(endpoint, Opcode::kSend, 0, timeout)) return *bad;
    if (at != kLargest) {
      return failure("RDMA write of 1 MiB lands intact", "byte " + std::to_string(at) + " differs",
                     "RDMA write data check");
    }
  }
  // Both sides finish together, so no endpoint is torn down under the peer's last send.
  if (Status done = context.link.barrier("done"); !done.ok()) return harness_error(done.error());
  return {};
}

// Test-only: the harness's own crash and kill handling.
ScenarioOutcome abort_now(ScenarioContext& context) {
  context.link.step("call abort()");
  std::abort();
}

ScenarioOutcome dereference_null(ScenarioContext& context) {
  context.link.step("dereference a null pointer");
  volatile int* null_pointer = nullptr;
  *null_pointer = 1;
  return {};
}

ScenarioOutcome sleep_a_while(ScenarioContext& context) {
  const auto milliseconds = context.params.value("ms", 10000);
  context.link.step("sleep " + std::to_string(milliseconds) + " ms");
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
  return {};
}

bool test_scenarios_enabled() {
  const char* enabled = std::getenv("FAULTLINE_ENABLE_TEST_SCENARIOS");
  return enabled != nullptr && std::string(enabled) == "1";
}

}  // namespace

std::vector<BuiltinScenario> builtin_scenarios() {
  std::vector<BuiltinScenario> scenarios = {
      {"pingpong", "send/recv ping-pong 1 B to 1 MiB and a 1 MiB RDMA write, data checked",
       pingpong, 60s, false},
  };
  if (test_scenarios_enabled()) {
    scenarios.push_back(
        {"test.abort", "test only: the scenario process aborts", abort_now, 20s, true});
    scenarios.push_back({"test.segfault", "test only: the scenario process dereferences null",
                         dereference_null, 20s, true});
    scenarios.push_back(
        {"test.sleep", "test only: the scenario sleeps (params.ms)", sleep_a_while, 30s, true});
  }
  return scenarios;
}

const BuiltinScenario* find_builtin_scenario(const std::string& id) {
  static const std::vector<BuiltinScenario> scenarios = builtin_scenarios();
  for (const auto& scenario : scenarios) {
    if (scenario.id == id) return &scenario;
  }
  return nullptr;
}

}  // namespace faultline::harness
