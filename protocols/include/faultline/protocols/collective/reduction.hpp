#pragma once

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

/// The byte range [first, second) of segment `index` when `bytes` of `type` are split over
/// `ranks`: whole elements, the first `elements % ranks` segments one element longer, every
/// element in exactly one segment (a segment may be empty when elements < ranks).
std::pair<size_t, size_t> ring_segment(size_t bytes, DataType type, size_t ranks, size_t index);

/// IEEE 754 half precision, for float16 sums (done in float32, rounded to nearest even).
float half_to_float(uint16_t half);
uint16_t float_to_half(float value);

}  // namespace faultline::protocols::collective
