#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"

namespace faultline::harness::bench {

/// One size of a streaming run: what the sender moved while keeping `window` operations
/// outstanding, from its first post to its last completion.
struct BandwidthRow {
  size_t bytes = 0;
  uint64_t iterations = 0;
  double mib_per_second = 0;  ///< 2^20 bytes per second, as perftest's "MB/sec"
  double messages_per_second = 0;
};

struct BandwidthOptions {
  transports::Target target;
  std::string op = "write";  ///< "write" (RDMA write) or "send" (send/recv)
  std::vector<size_t> sizes = {4096, 65536, 1048576, 4194304};
  uint64_t iterations = 1000;
  uint64_t warmup = 64;
  uint32_t window = 64;  ///< operations outstanding at once (perftest's --tx-depth)
  bool idle_decorator = false;
};

/// A sender streams to a receiver (each its own device and thread); for sends the receiver
/// keeps twice the window of receives posted.
Result<std::vector<BandwidthRow>> run_bandwidth(const BandwidthOptions& options);

}  // namespace faultline::harness::bench
