#include "faultline/protocols/collective/reduction.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

using namespace faultline::protocols::collective;

TEST_CASE("float16 converts exactly where half precision can", "[unit]") {
  for (float value : {0.0F, 1.0F, -2.5F, 65504.0F, 0.000061035156F, 1024.0F, 0.333251953125F}) {
    CAPTURE(value);
    CHECK(half_to_float(float_to_half(value)) == value);
  }
  CHECK(float_to_half(1.0F) == 0x3c00);
  CHECK(float_to_half(100000.0F) == 0x7c00);                      // overflow is infinity
  CHECK(half_to_float(0x0001) == Approx(5.960464477539063e-08));  // the smallest subnormal
  CHECK(float_to_half(1.0F + 1.0F / 2048) == 0x3c00);             // a tie rounds to even
}

TEST_CASE("sum_into adds element by element for each type", "[unit]") {
  std::vector<int32_t> a = {1, -2, 2147483647};
  std::vector<int32_t> b = {10, 20, 1};
  sum_into(std::as_writable_bytes(std::span(a)), std::as_bytes(std::span(b)), DataType::kInt32);
  CHECK(a == std::vector<int32_t>{11, 18, -2147483647 - 1});  // int32 wraps
  std::vector<float> x = {0.5F, 1.25F};
  std::vector<float> y = {0.25F, -1.25F};
  sum_into(std::as_writable_bytes(std::span(x)), std::as_bytes(std::span(y)), DataType::kFloat32);
  CHECK(x == std::vector<float>{0.75F, 0.0F});
  std::vector<uint16_t> h = {float_to_half(1.5F)};
  std::vector<uint16_t> g = {float_to_half(2.25F)};
  sum_into(std::as_writable_bytes(std::span(h)), std::as_bytes(std::span(g)), DataType::kFloat16);
  CHECK(half_to_float(h[0]) == 3.75F);
  CHECK(data_type_from_string("float16") == DataType::kFloat16);
  CHECK(element_size(DataType::kFloat16) == 2);
}

TEST_CASE("ring segments cover every element once, in whole elements", "[unit]") {
  for (DataType type : {DataType::kFloat32, DataType::kFloat16}) {
    for (size_t ranks : {1U, 2U, 3U, 4U, 7U}) {
      for (size_t elements : {0U, 1U, 3U, 4U, 5U, 10007U}) {
        CAPTURE(to_string(type), ranks, elements);
        const size_t bytes = elements * element_size(type);
        size_t next = 0;
        size_t shortest = bytes;
        size_t longest = 0;
        for (size_t i = 0; i < ranks; ++i) {
          const auto [begin, end] = ring_segment(bytes, type, ranks, i);
          CHECK(begin == next);  // contiguous, in order
          CHECK((end - begin) % element_size(type) == 0);
          shortest = std::min(shortest, end - begin);
          longest = std::max(longest, end - begin);
          next = end;
        }
        CHECK(next == bytes);
        CHECK(longest - shortest <= element_size(type));  // at most one element apart
      }
    }
  }
  // a trailing partial element is not part of any segment
  CHECK(ring_segment(9, DataType::kFloat32, 2, 1) == std::pair<size_t, size_t>{4, 8});
}

TEST_CASE("a sum stream sums pieces of any length, elements split between pieces too", "[unit]") {
  // 1000 floats arrive in pieces of 7, 1 and 3 bytes (the ring's chunks land this way when a
  // chunk size is no multiple of the element), and 9 bytes past the end.
  std::vector<float> into(1000);
  std::vector<float> from(1000 + 3);
  for (size_t e = 0; e < from.size(); ++e) from[e] = static_cast<float>(e % 13);
  for (size_t e = 0; e < into.size(); ++e) into[e] = 0.5F;
  SumStream stream(std::as_writable_bytes(std::span(into)), DataType::kFloat32);
  const auto bytes = std::as_bytes(std::span(from));
  size_t at = 0;
  for (size_t piece = 0; at < bytes.size(); ++piece) {
    const size_t length =
        std::min<size_t>(std::array<size_t, 3>{7, 1, 3}[piece % 3], bytes.size() - at);
    stream.add(bytes.subspan(at, length));
    at += length;
  }
  for (size_t e = 0; e < into.size(); ++e) {
    CAPTURE(e);
    REQUIRE(into[e] == static_cast<float>(e % 13) + 0.5F);
  }
}
