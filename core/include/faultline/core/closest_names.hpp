#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace faultline {

/// The names of `known` closest to `wanted` (for "did you mean"): those containing it first,
/// then by edit distance, at most `count`, none further than a third of its length (at least
/// 2) unless they contain it. Empty when nothing is close.
std::vector<std::string> closest_names(const std::string& wanted,
                                       const std::vector<std::string>& known, size_t count = 3);

/// "did you mean A, B or C?", or "" when `names` is empty.
std::string did_you_mean(const std::vector<std::string>& names);

}  // namespace faultline
