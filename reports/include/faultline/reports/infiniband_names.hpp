#pragma once

#include <cstdint>
#include <string>

namespace faultline::reports {

/// A port counter as node_exporter's infiniband collector exports it.
struct InfinibandMetric {
  std::string name;         ///< without the namespace: "port_data_received_bytes_total"
  uint64_t multiplier = 1;  ///< 4 for the IB data counters, which count 4-octet words
};

/// The name of the counter `key` ("hw_counters/rcvd_rnr_err", "counters/port_rcv_data"),
/// as node_exporter names it; an rxe counter that means the same as an mlx5 one
/// (rxe `rcvd_rnr_err`, mlx5 `rnr_nak_retry_err`: RNR NAKs received) gets that name, so one
/// dashboard serves both. Counters node_exporter does not know become "NAME_total"; a file
/// that is not a counter (mlx5 `lifespan`) gets an empty name.
InfinibandMetric infiniband_metric(const std::string& key);

}  // namespace faultline::reports
