#pragma once

// Two endpoints of one target for the data-path benchmarks: each on its own device (as two
// processes would hold them), each with one registered buffer per direction, connected.
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "faultline/harness/builtin_scenarios.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::harness::bench {

// Members are destroyed in reverse order: the endpoint first, then the regions, their
// buffers and last the device.
struct BenchSide {
  std::unique_ptr<transports::Device> device;
  std::vector<std::byte> tx;
  std::vector<std::byte> rx;
  std::unique_ptr<transports::MemoryRegion> tx_region;
  std::unique_ptr<transports::MemoryRegion> rx_region;
  std::unique_ptr<transports::Endpoint> endpoint;
  uint64_t receives_posted = 0;
  uint64_t receives_completed = 0;
  uint64_t signaled_sends_outstanding = 0;
  std::vector<transports::Completion> polled = std::vector<transports::Completion>(16);

  /// One receive of the whole rx buffer (every message of a run fits it).
  Status post_receive();
  /// Posts one message of `length` from the tx buffer: a send, or an RDMA write (with
  /// immediate when `imm`) into the peer's rx buffer.
  Status post_message(const BenchSide& peer, transports::Opcode op, size_t length,
                                  bool inline_data, bool signaled);
  /// Polls once without blocking: counts receives and signaled send completions; a failed
  /// completion is an error naming it.
  Status poll_once();
  /// Polls until every signaled send completed. A message above the provider's eager size
  /// only finishes while its sender makes progress (rxm's segmentation and rendezvous).
  Status finish_sends();
};

struct BenchPairOptions {
  transports::Target target;
  size_t buffer_bytes = 0;
  uint32_t send_depth = 64;
  uint32_t recv_depth = 64;
  /// The fault decorator in the path with a fault that never fires, to measure its cost.
  bool idle_decorator = false;
};

struct BenchPair {
  std::unique_ptr<BenchSide> client;
  std::unique_ptr<BenchSide> server;
  const transports::DeviceInfo& info() const { return client->device->info(); }
};

Result<BenchPair> open_bench_pair(const BenchPairOptions& options);

/// How long a benchmark waits for a completion before calling the run stuck.
inline constexpr auto kBenchStall = std::chrono::seconds(10);

}  // namespace faultline::harness::bench
