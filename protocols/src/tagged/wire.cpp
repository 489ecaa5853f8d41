#include "wire.hpp"

#include <cstring>
#include <string>

namespace faultline::protocols::tagged {

size_t write_frame(std::byte* slot, const FrameHeader& header, std::span<const std::byte> body) {
  std::memcpy(slot, &header, sizeof header);
  if (!body.empty()) std::memcpy(slot + sizeof header, body.data(), body.size());
  return sizeof header + body.size();
}

std::vector<std::byte> encode_frame(const FrameHeader& header, std::span<const std::byte> body) {
  std::vector<std::byte> frame(sizeof header + body.size());
  write_frame(frame.data(), header, body);
  return frame;
}

std::vector<std::byte> encode_receives(std::span<const ReceiveEntry> entries) {
  const FrameHeader header{.kind = FrameKind::kReceives,
                           .entry_count = static_cast<uint8_t>(entries.size())};
  return encode_frame(header, std::as_bytes(entries));
}

std::vector<std::byte> encode_written(const ReceiveEntry& entry, uint64_t length) {
  const FrameHeader header{
      .kind = FrameKind::kWritten, .tag = entry.tag, .seq = entry.seq, .length = length};
  return encode_frame(header, std::as_bytes(std::span(&entry.token, 1)));
}

std::vector<std::byte> encode_truncated(uint64_t tag, uint64_t seq, uint64_t length) {
  return encode_frame({.kind = FrameKind::kTruncated, .tag = tag, .seq = seq, .length = length},
                      {});
}

Result<DecodedFrame> decode_frame(std::span<const std::byte> bytes) {
  DecodedFrame frame;
  if (bytes.size() < sizeof frame.header) {
    return Error{ErrorCode::kProtocolViolation,
                 "a frame of " + std::to_string(bytes.size()) + " bytes, shorter than its header"};
  }
  std::memcpy(&frame.header, bytes.data(), sizeof frame.header);
  if (frame.header.magic != kWireMagic) {
    return Error{ErrorCode::kProtocolViolation, "a frame without the tagged magic"};
  }
  frame.body = bytes.subspan(sizeof frame.header);
  return frame;
}

Result<std::vector<ReceiveEntry>> decode_receives(const DecodedFrame& frame) {
  const size_t count = frame.header.entry_count;
  if (count > kMaxGroup || frame.body.size() < count * sizeof(ReceiveEntry)) {
    return Error{ErrorCode::kProtocolViolation, "a receives frame of " + std::to_string(count) +
                                                    " entries in " +
                                                    std::to_string(frame.body.size()) + " bytes"};
  }
  std::vector<ReceiveEntry> entries(count);
  if (count > 0) std::memcpy(entries.data(), frame.body.data(), count * sizeof(ReceiveEntry));
  return entries;
}

uint32_t decode_written_token(const DecodedFrame& frame) {
  uint32_t token = 0;
  if (frame.body.size() >= sizeof token) std::memcpy(&token, frame.body.data(), sizeof token);
  return token;
}

}  // namespace faultline::protocols::tagged
