#pragma once

#include <cstddef>

namespace faultline::transports {

/// A byte pattern that depends on the position and a seed, so that misplaced, shifted,
/// truncated or stale data all show. Used for every data check (tests, scenarios, protocols).
void fill_pattern(std::byte* data, size_t length, unsigned seed);

/// The index of the first byte that differs from the pattern, or `length` when all match.
size_t first_pattern_mismatch(const std::byte* data, size_t length, unsigned seed);

}  // namespace faultline::transports
