#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

namespace faultline::harness::bench {

/// The value at `fraction` (0.5: the median) of a non-empty sample.
inline double percentile(std::vector<double> values, double fraction) {
  const size_t at = std::min(values.size() - 1,
                             static_cast<size_t>(fraction * static_cast<double>(values.size())));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(at), values.end());
  return values[at];
}

/// The sample standard deviation (0 for fewer than 2 values).
inline double standard_deviation(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  double squares = 0;
  for (double value : values) squares += (value - mean) * (value - mean);
  return std::sqrt(squares / (n - 1));
}

}  // namespace faultline::harness::bench
