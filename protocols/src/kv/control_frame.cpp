#include "control_frame.hpp"

#include <algorithm>
#include <cstring>

namespace faultline::protocols::kv {

namespace {

constexpr size_t kHeaderBytes = 16;

size_t entry_size(FrameKind kind) {
  switch (kind) {
    case FrameKind::kAnnounce: return 16;
    case FrameKind::kGrant: return 24;
    case FrameKind::kReject: return 40;
  }
  return 0;
}

// Appends and reads fixed-size values at a moving offset.
struct Writer {
  std::span<std::byte> out;
  size_t offset = 0;
  template <typename T>
  void put(const T& value) {
    std::memcpy(out.data() + offset, &value, sizeof value);
    offset += sizeof value;
  }
};

struct Reader {
  std::span<const std::byte> in;
  size_t offset = 0;
  template <typename T>
  void get(T& value) {
    std::memcpy(&value, in.data() + offset, sizeof value);
    offset += sizeof value;
  }
};

}  // namespace

size_t encoded_size(FrameKind kind, size_t entries) {
  if (kind == FrameKind::kReject) entries = 1;
  return kHeaderBytes + entries * entry_size(kind);
}

size_t encode(const ControlFrame& frame, std::span<std::byte> out) {
  Writer writer{out};
  writer.put(frame.magic);
  writer.put(frame.kind);
  writer.put(frame.message_type);
  writer.put(frame.segment_count);
  writer.put(frame.request_id);
  writer.put(uint32_t{0});
  if (frame.kind == FrameKind::kReject) {
    writer.put(frame.expected);
    writer.put(frame.actual);
    writer.put(frame.field);
    return writer.offset;
  }
  for (size_t i = 0; i < std::min(frame.entries, kMaxSegments); ++i) {
    if (frame.kind == FrameKind::kGrant) {
      writer.put(frame.addresses[i]);
      writer.put(frame.keys[i]);
    }
    writer.put(frame.lengths[i]);
    if (frame.kind == FrameKind::kAnnounce) writer.put(frame.digests[i]);
  }
  return writer.offset;
}

std::optional<ControlFrame> decode(std::span<const std::byte> bytes) {
  if (bytes.size() < kHeaderBytes) return std::nullopt;
  ControlFrame frame;
  Reader reader{bytes};
  uint32_t reserved = 0;
  reader.get(frame.magic);
  reader.get(frame.kind);
  reader.get(frame.message_type);
  reader.get(frame.segment_count);
  reader.get(frame.request_id);
  reader.get(reserved);
  const size_t size = entry_size(frame.kind);
  if (size == 0) return frame;  // an unknown kind: the header alone
  const size_t arrived = (bytes.size() - kHeaderBytes) / size;
  if (frame.kind == FrameKind::kReject) {
    if (arrived == 0) return frame;
    reader.get(frame.expected);
    reader.get(frame.actual);
    reader.get(frame.field);
    frame.field.back() = '\0';
    return frame;
  }
  frame.entries = std::min(arrived, kMaxSegments);
  for (size_t i = 0; i < frame.entries; ++i) {
    if (frame.kind == FrameKind::kGrant) {
      reader.get(frame.addresses[i]);
      reader.get(frame.keys[i]);
    }
    reader.get(frame.lengths[i]);
    if (frame.kind == FrameKind::kAnnounce) reader.get(frame.digests[i]);
  }
  return frame;
}

}  // namespace faultline::protocols::kv
