#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace faultline::protocols::kv {

/// The control messages of the rendezvous (host byte order: both sides of a faultline run
/// share an architecture).
enum class FrameKind : uint8_t { kAnnounce = 1, kGrant = 2, kReject = 3 };

inline constexpr uint32_t kFrameMagic = 0x464b5631;  // "FKV1"
inline constexpr size_t kMaxSegments = 4;
/// The largest encoded frame (a grant of kMaxSegments): the size of a receive slot.
inline constexpr size_t kMaxFrameBytes = 192;

/// A control frame as the code sees it. On the wire it is compact, so the small ones fit an
/// inline post: a 16-byte header (magic, kind, message type, segment count, request id), then
/// one entry per segment: an announce's length and digest (16 bytes: a three-segment announce
/// is 64 bytes), a grant's address, key and length (24 bytes); a reject's single entry is the
/// expected and actual values and the field (40 bytes).
struct ControlFrame {
  uint32_t magic = kFrameMagic;
  FrameKind kind = FrameKind::kAnnounce;
  uint8_t message_type = 0;
  uint16_t segment_count = 0;  ///< as announced (a corrupted header may disagree with entries)
  uint32_t request_id = 0;
  size_t entries = 0;  ///< segment entries that travel (announce and grant)
  std::array<uint64_t, kMaxSegments> lengths{};
  std::array<uint64_t, kMaxSegments> digests{};    ///< announce: FNV-1a of each segment
  std::array<uint64_t, kMaxSegments> addresses{};  ///< grant: where each segment goes
  std::array<uint64_t, kMaxSegments> keys{};
  uint64_t expected = 0;  ///< reject: the violation
  uint64_t actual = 0;
  std::array<char, 24> field{};
};

/// The encoded size of a frame of `kind` with `entries` segment entries.
size_t encoded_size(FrameKind kind, size_t entries);
/// Writes `frame` into `out` (at least kMaxFrameBytes); returns the bytes written.
size_t encode(const ControlFrame& frame, std::span<std::byte> out);
/// The frame in `bytes` (as many entries as arrived, at most kMaxSegments); nullopt when the
/// bytes are shorter than a header.
std::optional<ControlFrame> decode(std::span<const std::byte> bytes);

}  // namespace faultline::protocols::kv
