#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace faultline {

inline constexpr uint64_t kFnv1aBasis = 0xcbf29ce484222325ULL;

/// 64-bit FNV-1a of `bytes`, continuing from `hash`: stable across builds and machines, unlike
/// std::hash (seeds derived from names, digests of kv segments).
inline uint64_t fnv1a(std::span<const std::byte> bytes, uint64_t hash = kFnv1aBasis) {
  for (std::byte byte : bytes) {
    hash ^= static_cast<uint64_t>(byte);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace faultline
