#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::harness::control {

/// Frames on the control channel: a 4-byte big-endian length, then that many bytes of one
/// JSON object. Anything larger than this is refused before it is read.
inline constexpr uint32_t kMaxFrameSize = 1U << 20;

/// The bytes of one frame carrying `message`.
std::vector<std::byte> encode_frame(const nlohmann::json& message);

/// Reassembles frames from a byte stream, however it is split. Not thread-safe.
class FrameDecoder {
 public:
  /// Appends received bytes.
  void feed(const std::byte* data, size_t length);
  /// The next complete frame as a JSON object; nullopt when more bytes are needed; an error
  /// (kProtocolViolation) for an oversized length, bad JSON, JSON nested deeper than
  /// kMaxJsonDepth, or JSON that is not an object.
  /// After an error the stream is unusable and the connection should be closed.
  Result<std::optional<nlohmann::json>> next();
  /// Bytes received but not yet part of a returned frame (a truncated frame at EOF).
  size_t pending() const { return buffer_.size(); }

 private:
  std::vector<std::byte> buffer_;
};

}  // namespace faultline::harness::control
