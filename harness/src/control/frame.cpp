#include "faultline/harness/control/frame.hpp"

#include <cstring>
#include <string_view>

#include "faultline/core/json_depth.hpp"

namespace faultline::harness::control {

std::vector<std::byte> encode_frame(const nlohmann::json& message) {
  const std::string text = message.dump();
  const auto length = static_cast<uint32_t>(text.size());
  std::vector<std::byte> frame(4 + text.size());
  frame[0] = std::byte(length >> 24);
  frame[1] = std::byte(length >> 16);
  frame[2] = std::byte(length >> 8);
  frame[3] = std::byte(length);
  std::memcpy(frame.data() + 4, text.data(), text.size());
  return frame;
}

void FrameDecoder::feed(const std::byte* data, size_t length) {
  buffer_.insert(buffer_.end(), data, data + length);
}

Result<std::optional<nlohmann::json>> FrameDecoder::next() {
  if (buffer_.size() < 4) return std::optional<nlohmann::json>{};
  const uint32_t length = (std::to_integer<uint32_t>(buffer_[0]) << 24) |
                          (std::to_integer<uint32_t>(buffer_[1]) << 16) |
                          (std::to_integer<uint32_t>(buffer_[2]) << 8) |
                          std::to_integer<uint32_t>(buffer_[3]);
  if (length > kMaxFrameSize) {
    return Error{ErrorCode::kProtocolViolation, "frame length " + std::to_string(length) +
                                                    " exceeds the maximum " +
                                                    std::to_string(kMaxFrameSize)};
  }
  if (buffer_.size() < 4 + static_cast<size_t>(length)) return std::optional<nlohmann::json>{};
  const auto* begin = reinterpret_cast<const char*>(buffer_.data()) + 4;
  if (const size_t depth = json_nesting_depth(std::string_view(begin, length));
      depth > kMaxJsonDepth) {
    return Error{ErrorCode::kProtocolViolation, "frame nests " + std::to_string(depth) +
                                                    " levels deep; at most " +
                                                    std::to_string(kMaxJsonDepth) + " are read"};
  }
  nlohmann::json message = nlohmann::json::parse(begin, begin + length, nullptr, false);
  buffer_.erase(buffer_.begin(), buffer_.begin() + 4 + length);
  if (message.is_discarded()) {
    return Error{ErrorCode::kProtocolViolation,
                 "frame of " + std::to_string(length) + " bytes is not valid JSON"};
  }
  if (!message.is_object()) {
    return Error{ErrorCode::kProtocolViolation, "frame is JSON but not an object"};
  }
  return std::optional<nlohmann::json>{std::move(message)};
}

}  // namespace faultline::harness::control
