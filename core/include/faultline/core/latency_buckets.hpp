#pragma once

#include <vector>

namespace faultline {

/// Upper bounds (seconds) of the operation latency buckets. The traffic meter records report
/// histograms with them and the metrics export them, so a report's buckets add straight into
/// a Prometheus histogram. From 500 ns (hardware send latency is 1-3 us) to seconds (RNR and
/// retries).
const std::vector<double>& latency_bounds_seconds();

}  // namespace faultline
