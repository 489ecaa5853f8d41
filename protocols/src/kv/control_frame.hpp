#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace faultline::protocols::kv {

/// The control messages of the rendezvous, as they travel (host byte order: both sides of a
/// faultline run share an architecture).
enum class FrameKind : uint8_t { kAnnounce = 1, kGrant = 2, kReject = 3 };

inline constexpr uint32_t kFrameMagic = 0x464b5631;  // "FKV1"
inline constexpr size_t kMaxSegments = 4;

struct ControlFrame {
  uint32_t magic = kFrameMagic;
  FrameKind kind = FrameKind::kAnnounce;
  uint8_t message_type = 0;
  uint16_t segment_count = 0;
  uint32_t request_id = 0;
  uint32_t reserved = 0;
  std::array<uint64_t, kMaxSegments> lengths{};
  std::array<uint64_t, kMaxSegments> addresses{};  ///< grant: where each segment goes
  std::array<uint64_t, kMaxSegments> keys{};
  uint64_t expected = 0;  ///< reject: the violation
  uint64_t actual = 0;
  std::array<char, 24> field{};
};

static_assert(sizeof(ControlFrame) <= 192, "a control frame fits one receive slot");

}  // namespace faultline::protocols::kv
