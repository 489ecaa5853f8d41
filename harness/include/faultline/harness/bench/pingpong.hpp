#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"

namespace faultline::harness::bench {

/// One size of a ping-pong: one-way latency, half of each round trip, in microseconds.
struct LatencyRow {
  size_t bytes = 0;
  uint64_t iterations = 0;
  double min_us = 0;
  double median_us = 0;
  double mean_us = 0;  ///< what fi_pingpong prints as usec/xfer
  double p99_us = 0;
  double p999_us = 0;
  double max_us = 0;
  double stdev_us = 0;
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
  /// Inline only up to this many bytes (perftest's -I; 0: never); unset: the device's limit.
  std::optional<uint32_t> max_inline;
  /// Measure each size for this many seconds instead of `iterations` (perftest's -D).
  std::optional<double> duration_seconds;
  /// verbs: the GID index of the endpoint (perftest's -x); unset: chosen automatically.
  std::optional<uint32_t> gid_index;
};

/// Two nodes: `bench pingpong --server` answers one client on `port` (every address); the
/// client (`--client HOST`) sends its options, measures and prints. Each side opens its own
/// device (--device, else the one toward the other side). Send/recv only.
Result<std::vector<LatencyRow>> run_pingpong_client(const PingpongOptions& options,
                                                    const std::string& server, uint16_t port);
/// Serves one client, then returns what it asked for (its options), or why it failed.
Result<PingpongOptions> run_pingpong_server(const PingpongOptions& options, uint16_t port,
                                            std::chrono::seconds wait);

/// Ping-pong between two endpoints of the target, each on its own device and driven by its
/// own thread (as two processes would). A payload that fits the device's inline limit goes
/// inline and unsignaled (every 16th signaled, so a verbs send queue drains), as
/// fi_pingpong's fi_inject and perftest's inline sends do.
Result<std::vector<LatencyRow>> run_pingpong(const PingpongOptions& options);

}  // namespace faultline::harness::bench
