#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

namespace faultline::protocols::collective {

/// Element types a collective reduces (by sum).
enum class DataType { kFloat32, kInt32, kFloat16 };

size_t element_size(DataType type);
std::string_view to_string(DataType type);
std::optional<DataType> data_type_from_string(std::string_view name);

/// into[i] += from[i] for every element; both hold whole elements of `type`.
void sum_into(std::span<std::byte> into, std::span<const std::byte> from, DataType type);

/// Sums a stream of bytes, arriving in pieces of any length, into `into` element by element:
/// an element split between two pieces is summed once both halves are there. What goes past
/// the end of `into` is ignored.
class SumStream {
 public:
  SumStream(std::span<std::byte> into, DataType type) : into_(into), type_(type) {}
  void add(std::span<const std::byte> piece);

 private:
  std::span<std::byte> into_;
  DataType type_;
  size_t summed_ = 0;  ///< bytes of `into` summed, whole elements
  std::array<std::byte, 4> partial_{};
  size_t partial_size_ = 0;  ///< bytes of the element split between pieces
};

/// The byte range [first, second) of segment `index` when `bytes` of `type` are split over
/// `ranks`: whole elements, the first `elements % ranks` segments one element longer, every
/// element in exactly one segment (a segment may be empty when elements < ranks).
std::pair<size_t, size_t> ring_segment(size_t bytes, DataType type, size_t ranks, size_t index);

/// IEEE 754 half precision, for float16 sums (done in float32, rounded to nearest even).
float half_to_float(uint16_t half);
uint16_t float_to_half(float value);

}  // namespace faultline::protocols::collective
