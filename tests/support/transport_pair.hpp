#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "faultline/transports/data_pattern.hpp"
#include "faultline/transports/local_pair.hpp"
#include "support/test_targets.hpp"

namespace faultline::testing {

using namespace std::chrono_literals;

/// Two connected endpoints on one target, each on its own opened device, the way two agents
/// would hold them. Opening failures fail the test (REQUIRE): a target under test must work.
class TransportPair {
 public:
  TransportPair(const Target& target, const transports::EndpointConfig& config_a,
                const transports::EndpointConfig& config_b);
  explicit TransportPair(const Target& target, const transports::EndpointConfig& config = {})
      : TransportPair(target, config, config) {}

  transports::Device& device_a() { return pair_->device(transports::LocalPair::kA); }
  transports::Device& device_b() { return pair_->device(transports::LocalPair::kB); }
  transports::Endpoint& a() { return pair_->endpoint(transports::LocalPair::kA); }
  transports::Endpoint& b() { return pair_->endpoint(transports::LocalPair::kB); }
  const transports::DeviceInfo& info() const { return pair_->info(); }

  /// Waits for one completion on A (or B), polling the other side meanwhile so that providers
  /// with manual progress (shm) move data; the other side's completions are kept for it.
  transports::Completion wait_a(std::chrono::milliseconds timeout = 10s);
  transports::Completion wait_b(std::chrono::milliseconds timeout = 10s);
  /// Every completion of A (or B) until none has come for `quiet`, progressing both sides.
  std::vector<transports::Completion> drain_a(std::chrono::milliseconds quiet = 300ms);
  std::vector<transports::Completion> drain_b(std::chrono::milliseconds quiet = 300ms);

  /// A zero-filled buffer registered on side A or B (access: transports::AccessFlags).
  transports::RegisteredBuffer buffer_a(size_t length, uint32_t access = transports::kAccessAll);
  transports::RegisteredBuffer buffer_b(size_t length, uint32_t access = transports::kAccessAll);

 private:
  transports::Completion wait(transports::LocalPair::Side side, std::chrono::milliseconds timeout);
  std::vector<transports::Completion> drain(transports::LocalPair::Side side,
                                            std::chrono::milliseconds quiet);

  std::unique_ptr<transports::LocalPair> pair_;
};

/// Opens the target's device (REQUIRE).
std::unique_ptr<transports::Device> open_device(const Target& target);
transports::RegisteredBuffer make_buffer(transports::Device& device, size_t length,
                                         uint32_t access);

using transports::fill_pattern;
using transports::first_pattern_mismatch;

}  // namespace faultline::testing
