#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/core/latency_buckets.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::transports::meter {

/// Post-to-completion times of one kind of operation.
struct LatencyHistogram {
  std::vector<uint64_t> buckets = std::vector<uint64_t>(latency_bounds_seconds().size() + 1);
  uint64_t count = 0;
  double sum_seconds = 0;
  double max_seconds = 0;
  void observe(double seconds);
};

/// What went over the endpoints of one metered device. Not thread-safe, like the endpoints.
struct TrafficCounts {
  std::map<std::string, uint64_t> completions;  ///< by status name ("SUCCESS", "REM_ACCESS_ERR")
  uint64_t bytes_sent = 0;                      ///< sends and writes that completed successfully
  uint64_t bytes_received = 0;  ///< receives (their byte_len) and reads that completed
  std::map<std::string, LatencyHistogram> latency;  ///< by opcode name ("SEND", "RDMA_WRITE")

  /// {"completions": {...}, "bytes": {"sent", "received"}, "latency": {op: {count,
  /// sum_seconds, max_seconds, buckets}}}: the `traffic` of a side in report.json.
  nlohmann::json to_json() const;
};

/// Wraps `device` so that its endpoints count every completion by status, the bytes of the
/// successful ones, and the time from each signaled send-side post to its completion. The
/// application sees exactly what the wrapped device gives it. Wrap outermost (over the fault
/// decorator) to count what the application sees.
std::unique_ptr<Device> meter_device(std::unique_ptr<Device> device,
                                     std::shared_ptr<TrafficCounts> counts);

}  // namespace faultline::transports::meter
