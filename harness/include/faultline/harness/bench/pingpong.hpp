#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/builtin_scenarios.hpp"

namespace faultline::harness::bench {

/// One size of a ping-pong: one-way latency, half of each round trip, in microseconds.
struct LatencyRow {
  size_t bytes = 0;
  uint64_t iterations = 0;
  double min_us = 0;
  double median_us = 0;
  double mean_us = 0;  ///< what fi_pingpong prints as usec/xfer
  double p99_us = 0;
};

struct PingpongOptions {
  transports::Target target;
  std::string op = "send";  ///< "send" (send/recv) or "write" (RDMA write with immediate)
  std::vector<size_t> sizes = {8, 64, 512, 4096, 65536};
  uint64_t iterations = 1000;
  uint64_t warmup = 100;
  bool idle_decorator = false;  ///< the fault decorator in the path, no fault firing
  /// The responder in a process of its own (forked), as fi_pingpong's server is, rather than
  /// a thread of this one. Send/recv only.
  bool two_processes = false;
};

/// Ping-pong between two endpoints of the target, each on its own device and driven by its
/// own thread (as two processes would). A payload that fits the device's inline limit goes
/// inline and unsignaled (every 16th signaled, so a verbs send queue drains), as
/// fi_pingpong's fi_inject and perftest's inline sends do.
Result<std::vector<LatencyRow>> run_pingpong(const PingpongOptions& options);

}  // namespace faultline::harness::bench
