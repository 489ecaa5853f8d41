#include "faultline/protocols/kv/segment_contract.hpp"

#include <string>

namespace faultline::protocols::kv {

namespace {

constexpr std::array<SegmentContract, 4> kContracts{{
    {MessageType::kPushRequest, "PushRequest", 3, {"keys", "vals", "lens"}},
    {MessageType::kPullRequest, "PullRequest", 2, {"keys", "vals", ""}},
    {MessageType::kPullResponse, "PullResponse", 3, {"keys", "vals", "lens"}},
    {MessageType::kPushResponse, "PushResponse", 0, {"", "", ""}},
}};

}  // namespace

const SegmentContract& contract_of(MessageType type) {
  return kContracts.at(static_cast<size_t>(type));
}

std::optional<MessageType> message_type_from_string(std::string_view name) {
  for (const auto& contract : kContracts) {
    if (contract.name == name) return contract.type;
  }
  return std::nullopt;
}

std::optional<ProtocolViolation> check_announce(MessageType type,
                                                std::span<const uint64_t> segment_lengths,
                                                std::string_view detected_by) {
  const SegmentContract& contract = contract_of(type);
  auto violation = [&](std::string field, uint64_t expected, uint64_t actual,
                       std::string detail = {}) {
    return ProtocolViolation{std::string(contract.name), std::move(field), expected, actual,
                             std::string(detected_by),   std::move(detail)};
  };
  if (segment_lengths.size() != contract.segment_count) {
    std::string names;
    for (uint32_t i = 0; i < contract.segment_count; ++i)
      names += (names.empty() ? "" : ", ") + std::string(contract.segments[i]);
    return violation("segment count", contract.segment_count, segment_lengths.size(),
                     "the contract is " + (names.empty() ? std::string("no segments") : names));
  }
  if (contract.segment_count == 0) return std::nullopt;
  // keys are 8 bytes each; lens, where present, 4 bytes per key.
  const uint64_t keys_bytes = segment_lengths[0];
  if (keys_bytes == 0 || keys_bytes % 8 != 0) {
    return violation("keys length", keys_bytes == 0 ? 8 : (keys_bytes / 8 + 1) * 8, keys_bytes,
                     "keys are 8 bytes each, at least one");
  }
  const uint64_t key_count = keys_bytes / 8;
  if (type == MessageType::kPullRequest && segment_lengths[1] != 0) {
    return violation("vals length", 0, segment_lengths[1], "a PullRequest carries no values");
  }
  if (contract.segment_count == 3 && segment_lengths[2] != key_count * 4) {
    return violation("lens length", key_count * 4, segment_lengths[2], "one 4-byte length per key");
  }
  return std::nullopt;
}

}  // namespace faultline::protocols::kv
