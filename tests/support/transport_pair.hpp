#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "faultline/transports/data_pattern.hpp"
#include "faultline/transports/transport.hpp"
#include "support/test_targets.hpp"

namespace faultline::testing {

using namespace std::chrono_literals;

/// A registered host buffer.
struct TestBuffer {
  std::shared_ptr<std::byte[]> memory;
  size_t length = 0;
  std::unique_ptr<transports::MemoryRegion> region;

  std::byte* data() const { return memory.get(); }
  transports::Segment segment(size_t offset, size_t bytes) const {
    return {memory.get() + offset, static_cast<uint32_t>(bytes), region.get()};
  }
  transports::Segment whole() const { return segment(0, length); }
};

/// Two connected endpoints on one target, each on its own opened device, the way two agents
/// would hold them. Opening failures fail the test (REQUIRE): a target under test must work.
class TransportPair {
 public:
  TransportPair(const Target& target, const transports::EndpointConfig& config_a,
                const transports::EndpointConfig& config_b);
  explicit TransportPair(const Target& target, const transports::EndpointConfig& config = {})
      : TransportPair(target, config, config) {}

  transports::Device& device_a() { return *device_a_; }
  transports::Device& device_b() { return *device_b_; }
  transports::Endpoint& a() { return *a_; }
  transports::Endpoint& b() { return *b_; }
  const transports::DeviceInfo& info() const { return device_a_->info(); }

  /// Waits for one completion on A (or B), polling the other side meanwhile so that providers
  /// with manual progress (shm) move data; the other side's completions are kept for it.
  transports::Completion wait_a(std::chrono::milliseconds timeout = 10s);
  transports::Completion wait_b(std::chrono::milliseconds timeout = 10s);
  /// Every completion of A (or B) until none has come for `quiet`, progressing both sides.
  std::vector<transports::Completion> drain_a(std::chrono::milliseconds quiet = 300ms);
  std::vector<transports::Completion> drain_b(std::chrono::milliseconds quiet = 300ms);

  /// A zero-filled buffer registered on side A or B (access: transports::AccessFlags).
  TestBuffer buffer_a(size_t length, uint32_t access = transports::kAccessAll);
  TestBuffer buffer_b(size_t length, uint32_t access = transports::kAccessAll);

 private:
  std::unique_ptr<transports::Device> device_a_;
  std::unique_ptr<transports::Device> device_b_;
  std::unique_ptr<transports::Endpoint> a_;
  std::unique_ptr<transports::Endpoint> b_;
  std::vector<transports::Completion> pending_a_;
  std::vector<transports::Completion> pending_b_;

  /// Polls both endpoints once without waiting, appending to the pending lists.
  void progress_both();
  transports::Completion wait(std::vector<transports::Completion>& pending,
                              std::chrono::milliseconds timeout);
  std::vector<transports::Completion> drain(std::vector<transports::Completion>& pending,
                                            std::chrono::milliseconds quiet);
};

/// Opens the target's device (REQUIRE).
std::unique_ptr<transports::Device> open_device(const Target& target);
TestBuffer make_buffer(transports::Device& device, size_t length, uint32_t access);

using transports::fill_pattern;
using transports::first_pattern_mismatch;

}  // namespace faultline::testing
