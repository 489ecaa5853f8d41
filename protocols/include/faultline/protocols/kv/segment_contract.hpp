#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "faultline/protocols/protocol_violation.hpp"

namespace faultline::protocols::kv {

/// The message types of the parameter-server protocol (the StepMesh shape).
enum class MessageType : uint8_t { kPushRequest, kPullRequest, kPullResponse, kPushResponse };

/// How many segments a message type carries and what they are. One table, used by the side
/// that builds a message and by the side that checks it.
struct SegmentContract {
  MessageType type;
  std::string_view name;
  uint32_t segment_count;
  std::array<std::string_view, 3> segments;  ///< the first `segment_count` are meaningful
};

const SegmentContract& contract_of(MessageType type);
std::optional<MessageType> message_type_from_string(std::string_view name);

/// Checks an announced message against the contract: the segment count first, then what the
/// table says of each segment (keys and lens of one entry per key, an empty vals in a
/// PullRequest). `detected_by` names the checking side in the violation.
std::optional<ProtocolViolation> check_announce(MessageType type,
                                                std::span<const uint64_t> segment_lengths,
                                                std::string_view detected_by);

}  // namespace faultline::protocols::kv
