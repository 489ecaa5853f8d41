#include "faultline/core/latency_buckets.hpp"

namespace faultline {

const std::vector<double>& latency_bounds_seconds() {
  static const std::vector<double> bounds = {5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4,
                                             5e-4, 1e-3, 2.5e-3, 1e-2, 0.1,  1};
  return bounds;
}

}  // namespace faultline
