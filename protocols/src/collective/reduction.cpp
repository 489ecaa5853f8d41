#include "faultline/protocols/collective/reduction.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

namespace faultline::protocols::collective {

size_t element_size(DataType type) {
  switch (type) {
    case DataType::kFloat32:
    case DataType::kInt32: return 4;
    case DataType::kFloat16: return 2;
  }
  return 1;
}

std::string_view to_string(DataType type) {
  switch (type) {
    case DataType::kFloat32: return "float32";
    case DataType::kInt32: return "int32";
    case DataType::kFloat16: return "float16";
  }
  return "unknown";
}

std::optional<DataType> data_type_from_string(std::string_view name) {
  for (DataType type : {DataType::kFloat32, DataType::kInt32, DataType::kFloat16}) {
    if (to_string(type) == name) return type;
  }
  return std::nullopt;
}

std::pair<size_t, size_t> ring_segment(size_t bytes, DataType type, size_t ranks, size_t index) {
  const size_t elements = bytes / element_size(type);
  const size_t base = elements / ranks;
  const size_t extra = elements % ranks;
  const size_t begin = index * base + std::min(index, extra);
  const size_t length = base + (index < extra ? 1 : 0);
  return {begin * element_size(type), (begin + length) * element_size(type)};
}

float half_to_float(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000U) << 16;
  uint32_t exponent = (half >> 10) & 0x1fU;
  uint32_t mantissa = half & 0x3ffU;
  uint32_t bits = 0;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400U) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      bits = sign | (exponent << 23) | ((mantissa & 0x3ffU) << 13);
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000U | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000U);
  const int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xffU) - 127 + 15;
  uint32_t mantissa = bits & 0x7fffffU;
  if (((bits >> 23) & 0xffU) == 0xff) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00U | (mantissa != 0 ? 0x200U : 0));
  }
  if (exponent >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00U);  // overflow: inf
  if (exponent <= 0) {
    if (exponent < -10) return sign;  // underflow: zero
    mantissa |= 0x800000U;
    const auto shift = static_cast<uint32_t>(14 - exponent);
    uint32_t half_mantissa = mantissa >> shift;
    const uint32_t rest = mantissa & ((1U << shift) - 1);
    const uint32_t halfway = 1U << (shift - 1);
    if (rest > halfway || (rest == halfway && (half_mantissa & 1U) != 0)) ++half_mantissa;
    return static_cast<uint16_t>(sign | half_mantissa);
  }
  uint32_t half = (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffU;
  if (rest > 0x1000U || (rest == 0x1000U && (half & 1U) != 0)) ++half;  // may carry into inf
  return static_cast<uint16_t>(sign | half);
}

namespace {

// into[i] += from[i] over `count` elements of T: the ring's inner loop, one tight loop the
// compiler vectorizes (clang does at -O2; GCC 12 only with its dynamic cost model).
template <typename T>
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
#endif
void add_elements(std::byte* into, const std::byte* from, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    T x;
    T y;
    std::memcpy(&x, into + i * sizeof(T), sizeof(T));
    std::memcpy(&y, from + i * sizeof(T), sizeof(T));
    x += y;
    std::memcpy(into + i * sizeof(T), &x, sizeof(T));
  }
}

}  // namespace

void sum_into(std::span<std::byte> into, std::span<const std::byte> from, DataType type) {
  const size_t count = std::min(into.size(), from.size()) / element_size(type);
  switch (type) {
    case DataType::kFloat32: return add_elements<float>(into.data(), from.data(), count);
    // Wraps like two's complement int32, without undefined overflow.
    case DataType::kInt32: return add_elements<uint32_t>(into.data(), from.data(), count);
    case DataType::kFloat16:
      for (size_t i = 0; i < count; ++i) {
        uint16_t x;
        uint16_t y;
        std::memcpy(&x, into.data() + i * 2, 2);
        std::memcpy(&y, from.data() + i * 2, 2);
        const uint16_t sum = float_to_half(half_to_float(x) + half_to_float(y));
        std::memcpy(into.data() + i * 2, &sum, 2);
      }
      return;
  }
}

void SumStream::add(std::span<const std::byte> piece) {
  const size_t element = element_size(type_);
  if (piece.empty()) return;
  if (partial_size_ > 0) {
    const size_t take = std::min(element - partial_size_, piece.size());
    std::memcpy(partial_.data() + partial_size_, piece.data(), take);
    partial_size_ += take;
    piece = piece.subspan(take);
    if (partial_size_ < element) return;
    if (summed_ < into_.size()) sum_into(into_.subspan(summed_), {partial_.data(), element}, type_);
    summed_ += element;
    partial_size_ = 0;
  }
  const size_t whole = piece.size() / element * element;
  if (summed_ < into_.size()) sum_into(into_.subspan(summed_), piece.first(whole), type_);
  summed_ += whole;
  partial_size_ = piece.size() - whole;
  if (partial_size_ > 0) std::memcpy(partial_.data(), piece.data() + whole, partial_size_);
}

}  // namespace faultline::protocols::collective
