#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace faultline::harness::bench {

/// The value at `fraction` (0.5: the median) of a non-empty sample.
inline double percentile(std::vector<double> values, double fraction) {
  const size_t at = std::min(values.size() - 1,
                             static_cast<size_t>(fraction * static_cast<double>(values.size())));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(at), values.end());
  return values[at];
}

}  // namespace faultline::harness::bench
