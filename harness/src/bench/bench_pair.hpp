#pragma once

// Two endpoints of one target for the data-path benchmarks (a LocalPair: each on its own
// device, as two processes would hold them), each with one registered buffer per direction.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "faultline/harness/scenario/builtin_scenarios.hpp"
#include "faultline/transports/local_pair.hpp"

namespace faultline::harness::bench {

// One side of a benchmark pair: its endpoint and buffers live in the pair's LocalPair; this
// keeps the side's counts. Each side may be driven by a thread of its own.
struct BenchSide {
  transports::Endpoint* endpoint = nullptr;
  transports::RegisteredBuffer* tx = nullptr;
  transports::RegisteredBuffer* rx = nullptr;
  uint64_t receives_posted = 0;
  uint64_t receives_completed = 0;
  uint64_t signaled_sends_outstanding = 0;
  std::vector<transports::Completion> polled = std::vector<transports::Completion>(16);

  /// One receive of the whole rx buffer (every message of a run fits it).
  Status post_receive();
  /// Posts one message of `length` from the tx buffer: a send, or an RDMA write (with
  /// immediate when `imm`) into the peer's rx buffer.
  Status post_message(const BenchSide& peer, transports::Opcode op, size_t length, bool inline_data,
                      bool signaled);
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
  std::optional<uint32_t> gid_index;  ///< verbs: the endpoint's GID (unset: automatic)
};

/// One side in this process alone (the other is in another process): its device, endpoint
/// and buffers, destroyed endpoint first, device last.
struct BenchEnd {
  std::unique_ptr<transports::Device> device;
  std::unique_ptr<transports::RegisteredBuffer> tx;
  std::unique_ptr<transports::RegisteredBuffer> rx;
  std::unique_ptr<transports::Endpoint> endpoint;
  BenchSide side;
};

/// Opens one side as open_bench_pair opens each of its two; `connect` it to the peer's
/// `endpoint->address()` before use.
Result<std::unique_ptr<BenchEnd>> open_bench_end(const BenchPairOptions& options);

struct BenchPair {
  std::unique_ptr<transports::LocalPair> local;  ///< owns both endpoints and the buffers
  std::unique_ptr<BenchSide> client;             ///< side A
  std::unique_ptr<BenchSide> server;             ///< side B
  const transports::DeviceInfo& info() const { return local->info(); }
};

Result<BenchPair> open_bench_pair(const BenchPairOptions& options);

/// How long a benchmark waits for a completion before calling the run stuck.
inline constexpr auto kBenchStall = std::chrono::seconds(10);

}  // namespace faultline::harness::bench
