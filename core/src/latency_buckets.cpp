#include "faultline/core/latency_buckets.hpp"

namespace faultline {

const std::vector<double>& latency_bounds_seconds() {
  // From 500 ns, so hardware's 1-3 us land in buckets of their own, to seconds.
  static const std::vector<double> bounds = {5e-7, 1e-6,   1.5e-6, 2e-6, 3e-6,   5e-6,
                                             1e-5, 2.5e-5, 5e-5,   1e-4, 2.5e-4, 5e-4,
                                             1e-3, 2.5e-3, 1e-2,   0.1,  1};
  return bounds;
}

}  // namespace faultline
