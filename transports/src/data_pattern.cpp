#include "faultline/transports/data_pattern.hpp"

namespace faultline::transports {

namespace {
std::byte pattern_byte(size_t index, unsigned seed) {
  return static_cast<std::byte>((index * 131 + size_t{seed} * 7 + (index >> 8)) & 0xff);
}
}  // namespace

void fill_pattern(std::byte* data, size_t length, unsigned seed) {
  for (size_t i = 0; i < length; ++i) data[i] = pattern_byte(i, seed);
}

size_t first_pattern_mismatch(const std::byte* data, size_t length, unsigned seed) {
  for (size_t i = 0; i < length; ++i) {
    if (data[i] != pattern_byte(i, seed)) return i;
  }
  return length;
}

}  // namespace faultline::transports
