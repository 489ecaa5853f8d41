#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::protocols::tagged {

/// The frames of the tagged engine, as they travel (host byte order: both sides of a faultline
/// run share an architecture). Every frame is one send into one of the peer's receive slots.
enum class FrameKind : uint8_t {
  kEager = 1,      ///< header + payload of at most the eager threshold
  kReceives = 2,   ///< receiver -> sender: the buffers of a posted (grouped) receive
  kCredits = 3,    ///< only returns credits
  kTruncated = 4,  ///< sender -> receiver: a message does not fit the receive it matched
  /// sender -> receiver: a rendezvous write was posted; its length, and the token (body).
  /// The receive is done once this and the write's immediate have both arrived: the
  /// immediate says the data is placed, this says how much (libfabric tcp reports length 0
  /// for a write with remote CQ data).
  kWritten = 5,
};

inline constexpr uint32_t kWireMagic = 0x46544731;  // "FTG1"
inline constexpr size_t kMaxGroup = 8;

struct FrameHeader {
  uint32_t magic = kWireMagic;
  FrameKind kind = FrameKind::kEager;
  uint8_t entry_count = 0;  ///< kReceives: entries following the header
  uint16_t credits = 0;     ///< receive slots of the peer's frames this side reposted
  uint64_t tag = 0;         ///< kEager, kTruncated
  uint64_t seq = 0;
  uint64_t length = 0;  ///< kEager: payload bytes; kTruncated, kWritten: the message's length
};

/// One buffer of a posted receive, for a sender whose message goes by rendezvous: it writes
/// there with immediate data `token`.
struct ReceiveEntry {
  uint64_t tag = 0;
  uint64_t seq = 0;
  uint64_t addr = 0;
  uint64_t key = 0;
  uint64_t capacity = 0;
  uint32_t token = 0;
  uint32_t reserved = 0;
};

static_assert(sizeof(FrameHeader) == 32);
static_assert(sizeof(ReceiveEntry) == 48);

/// A frame's bytes: its header, then its body.
std::vector<std::byte> encode_frame(const FrameHeader& header, std::span<const std::byte> body);
/// kReceives: the buffers of one posted receive (at most kMaxGroup).
std::vector<std::byte> encode_receives(std::span<const ReceiveEntry> entries);
/// kWritten: a rendezvous write of `length` bytes was posted for `entry`.
std::vector<std::byte> encode_written(const ReceiveEntry& entry, uint64_t length);
/// kTruncated: the message (`tag`, `seq`) of `length` bytes does not fit the buffer.
std::vector<std::byte> encode_truncated(uint64_t tag, uint64_t seq, uint64_t length);
/// Writes `header` and `body` into a send slot; returns the bytes written.
size_t write_frame(std::byte* slot, const FrameHeader& header, std::span<const std::byte> body);

/// A frame as it arrived: the header, and the body behind it.
struct DecodedFrame {
  FrameHeader header;
  std::span<const std::byte> body;
};
/// The header and body of `bytes`, or a kProtocolViolation: shorter than a header, or
/// without the tagged magic.
Result<DecodedFrame> decode_frame(std::span<const std::byte> bytes);
/// The entries of a kReceives frame, or a kProtocolViolation when they do not fit its body.
Result<std::vector<ReceiveEntry>> decode_receives(const DecodedFrame& frame);
/// The token of a kWritten frame (0 when the body is too short to hold one).
uint32_t decode_written_token(const DecodedFrame& frame);

}  // namespace faultline::protocols::tagged
