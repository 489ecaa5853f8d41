#include "faultline/harness/builtin_scenarios.hpp"
#include "builtin_steps.hpp"
#include "probe_scenario.hpp"

#include <csignal>
#include <cstdlib>
#include <thread>

#include "faultline/core/hex.hpp"
#include "faultline/harness/first_contact.hpp"
#include "faultline/transports/data_pattern.hpp"
#include "faultline/transports/json.hpp"
#include "faultline/transports/memory_provider.hpp"
#include "faultline/transports/registered_buffer.hpp"
#include "faultline/transports/registry.hpp"

namespace faultline::harness {

namespace {

using namespace transports;
using namespace std::chrono_literals;

constexpr size_t kLargest = 1 << 20;
constexpr std::array<size_t, 5> kSizes{1, 64, 4096, 65536, kLargest};

// One side of the built-in pingpong: an endpoint, a send and a receive buffer, and a region
// the peer writes into. Every method returns the side's failure, or nullopt.
class PingPong {
 public:
  using Outcome = std::optional<ScenarioOutcome>;

  explicit PingPong(ScenarioContext& context)
      : context_(context), initiator_(context.role == "initiator") {}

  Outcome run() {
    if (auto bad = connect()) return bad;
    for (size_t i = 0; i < kSizes.size(); ++i) {
      if (auto bad = ping_pong(i)) return bad;
    }
    if (auto bad = initiator_ ? write_and_ask() : check_write_and_answer()) return bad;
    // Both sides finish together, so no endpoint is torn down under the peer's last send.
    if (Status done = context_.link.barrier("done"); !done.ok()) return harness_error(done.error());
    return std::nullopt;
  }

 private:
  static constexpr auto kTimeout = 10s;
  static constexpr unsigned kWriteSeed = 99;

  Outcome connect() {
    auto device = open_target_device(context_.target);
    if (!device.ok()) return harness_error(device.error());
    device_ = std::move(device).value();
    EndpointConfig config;
    config.send_depth = 16;
    config.recv_depth = 16;
    auto endpoint = device_->create_endpoint(config);
    if (!endpoint.ok()) return harness_error(endpoint.error());
    endpoint_ = std::move(endpoint).value();
    for (auto* buffer : {&send_buffer_, &recv_buffer_, &rdma_region_}) {
      auto made = make_buffer(*device_, kLargest);
      if (!made.ok()) return harness_error(made.error());
      *buffer = std::move(made).value();
    }
    const auto own_address = endpoint_->address();
    nlohmann::json info = FirstContact::own_info(device_->info().name);
    info["address"] = to_hex(own_address);
    info["region"] = rdma_region_.region->remote();
    auto peer = context_.link.exchange(info);
    if (!peer.ok()) return harness_error(peer.error());
    try {
      peer->at("region").get_to(peer_region_);
      const auto peer_address = from_hex(peer->at("address"));
      first_contact_.joined(own_address, peer_address, device_->info().name, *peer);
      if (Status connected = endpoint_->connect(peer_address); !connected.ok())
        return harness_error(connected.error());
    } catch (const nlohmann::json::exception& e) {
      return harness_error(
          Error{ErrorCode::kProtocolViolation, std::string("peer info: ") + e.what()});
    }
    if (Status posted = repost(); !posted.ok()) return harness_error(posted.error());
    if (Status ready = context_.link.barrier("connected"); !ready.ok())
      return harness_error(ready.error());
    return std::nullopt;
  }

  // Size i: the initiator sends a ping and receives the pong; the responder the reverse.
  Outcome ping_pong(size_t i) {
    const size_t size = kSizes[i];
    const auto ping_seed = static_cast<unsigned>(2 * i + 1);
    const auto pong_seed = static_cast<unsigned>(2 * i + 2);
    const std::string bytes = std::to_string(size) + " B";
    if (initiator_) {
      if (auto bad = send(size, ping_seed, i, "send " + bytes + " ping")) return bad;
      return receive(size, pong_seed, "pong");
    }
    if (auto bad = receive(size, ping_seed, "ping")) return bad;
    return send(size, pong_seed, i, "send " + bytes + " pong");
  }

  // The next completion: a success of `op` (of `byte_len` bytes for a receive), or the failure.
  Outcome expect(Opcode op, uint32_t byte_len) {
    return expect_completion(*endpoint_, first_contact_, op, byte_len, kTimeout);
  }

  Status repost() {
    const Segment whole = recv_buffer_.segment(0, kLargest);
    return endpoint_->post_recv({1, {&whole, 1}});
  }

  // Sends `size` bytes of pattern `seed` and waits for the send to complete.
  Outcome send(size_t size, unsigned seed, uint64_t wr_id, const std::string& step) {
    context_.link.step(step);
    fill_pattern(send_buffer_.data(), size, seed);
    const Segment message = send_buffer_.segment(0, size);
    if (Status s =
            endpoint_->post_send({.wr_id = wr_id, .op = Opcode::kSend, .segments = {&message, 1}});
        !s.ok()) {
      return harness_error(s.error());
    }
    return expect(Opcode::kSend, 0);
  }

  // Receives `size` bytes that must hold pattern `seed`, then posts the receive again.
  Outcome receive(size_t size, unsigned seed, const std::string& what) {
    context_.link.step("receive " + std::to_string(size) + " B " + what);
    if (auto bad = expect(Opcode::kRecv, static_cast<uint32_t>(size))) return bad;
    if (size_t at = first_pattern_mismatch(recv_buffer_.data(), size, seed); at != size) {
      return failure(what + " of " + std::to_string(size) + " bytes as sent",
                     "byte " + std::to_string(at) + " differs", "send/recv data check");
    }
    if (Status s = repost(); !s.ok()) return harness_error(s.error());
    return std::nullopt;
  }

  // RDMA write of 1 MiB, then a 1-byte send that orders after it; the responder checks the
  // region and answers with one byte: 1 when the bytes are right.
  Outcome write_and_ask() {
    context_.link.step("RDMA write 1 MiB");
    fill_pattern(send_buffer_.data(), kLargest, kWriteSeed);
    const Segment all = send_buffer_.segment(0, kLargest);
    if (Status s = endpoint_->post_send({.wr_id = 100,
                                         .op = Opcode::kRdmaWrite,
                                         .segments = {&all, 1},
                                         .remote = peer_region_});
        !s.ok()) {
      return harness_error(s.error());
    }
    if (auto bad = expect(Opcode::kRdmaWrite, 0)) return bad;
    if (auto bad = send(1, 0, 101, "ask for the write check")) return bad;
    context_.link.step("receive the write check");
    if (auto bad = expect(Opcode::kRecv, 1)) return bad;
    if (recv_buffer_.data()[0] != std::byte{1}) {
      return failure("RDMA write of 1 MiB lands intact", "the responder found different bytes",
                     "RDMA write data check");
    }
    return std::nullopt;
  }

  Outcome check_write_and_answer() {
    context_.link.step("wait for the RDMA write");
    if (auto bad = expect(Opcode::kRecv, 1)) return bad;
    const size_t at = first_pattern_mismatch(rdma_region_.data(), kLargest, kWriteSeed);
    context_.link.step("answer the write check");
    send_buffer_.data()[0] = at == kLargest ? std::byte{1} : std::byte{0};
    const Segment one_byte = send_buffer_.segment(0, 1);
    if (Status s =
            endpoint_->post_send({.wr_id = 102, .op = Opcode::kSend, .segments = {&one_byte, 1}});
        !s.ok()) {
      return harness_error(s.error());
    }
    if (auto bad = expect(Opcode::kSend, 0)) return bad;
    if (at != kLargest) {
      return failure("RDMA write of 1 MiB lands intact", "byte " + std::to_string(at) + " differs",
                     "RDMA write data check");
    }
    return std::nullopt;
  }

  ScenarioContext& context_;
  const bool initiator_;
  std::unique_ptr<Device> device_;
  transports::RegisteredBuffer send_buffer_;
  transports::RegisteredBuffer recv_buffer_;
  transports::RegisteredBuffer rdma_region_;
  RemoteBuffer peer_region_;
  FirstContact first_contact_;
  std::unique_ptr<Endpoint> endpoint_;  // last: destroyed before the buffers and the device
};

ScenarioOutcome pingpong(ScenarioContext& context) {
  return PingPong(context).run().value_or(ScenarioOutcome{});
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
      {"probe",
       "the monitor's probe: 64 B round trips timed, an RDMA write burst timed, data checked",
       run_probe, 30s, false},
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
