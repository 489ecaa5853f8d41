#include "faultline/protocols/kv/kv_store.hpp"

#include <cstring>

namespace faultline::protocols::kv {

namespace {

template <typename T>
void append(std::vector<std::byte>& out, T value) {
  const auto* bytes = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

template <typename T>
T read_at(const std::vector<std::byte>& in, size_t index) {
  T value;
  std::memcpy(&value, in.data() + index * sizeof(T), sizeof(T));
  return value;
}

std::vector<std::span<const std::byte>> spans(const EncodedValues& encoded) {
  return {encoded.keys, encoded.vals, encoded.lens};
}

}  // namespace

EncodedValues encode(const KeyValues& values) {
  EncodedValues encoded;
  for (const auto& [key, value] : values) {
    append(encoded.keys, key);
    append(encoded.lens, static_cast<uint32_t>(value.size()));
    encoded.vals.insert(encoded.vals.end(), value.begin(), value.end());
  }
  return encoded;
}

Result<KeyValues> decode(const Message& message, const std::string& side) {
  const std::string name(contract_of(message.type).name);
  const auto& keys = message.segments.at(0);
  const auto& vals = message.segments.at(1);
  const auto& lens = message.segments.at(2);
  KeyValues values;
  size_t offset = 0;
  for (size_t i = 0; i < keys.size() / 8; ++i) {
    const auto length = read_at<uint32_t>(lens, i);
    if (offset + length > vals.size()) {
      return ProtocolViolation{
          name,        "vals length", offset + length,
          vals.size(), side,          "the lens add up to more than the vals carry"}
          .to_error();
    }
    values[read_at<uint64_t>(keys, i)].assign(vals.begin() + static_cast<long>(offset),
                                              vals.begin() + static_cast<long>(offset + length));
    offset += length;
  }
  return values;
}

Result<Message> KvWorker::expect(MessageType type) {
  auto message = rendezvous_.receive();
  if (!message.ok()) return message;
  if (message->type != type) {
    return ProtocolViolation{std::string(contract_of(type).name),
                             "message type",
                             static_cast<uint64_t>(type),
                             static_cast<uint64_t>(message->type),
                             "worker",
                             "got " + std::string(contract_of(message->type).name)}
        .to_error();
  }
  return message;
}

Status KvWorker::push(const KeyValues& values) {
  const EncodedValues encoded = encode(values);
  FAULTLINE_RETURN_IF_ERROR(rendezvous_.send(MessageType::kPushRequest, spans(encoded)));
  auto response = expect(MessageType::kPushResponse);
  return response.ok() ? Status{} : Status{response.error()};
}

Result<KeyValues> KvWorker::pull(const std::vector<uint64_t>& keys) {
  std::vector<std::byte> key_bytes;
  for (uint64_t key : keys) append(key_bytes, key);
  FAULTLINE_RETURN_IF_ERROR(
      rendezvous_.send(MessageType::kPullRequest, {key_bytes, std::span<const std::byte>()}));
  auto response = expect(MessageType::kPullResponse);
  if (!response.ok()) return std::move(response).take_error();
  return decode(response.value(), "worker");
}

Status KvServer::handle(const Message& request) {
  switch (request.type) {
    case MessageType::kPushRequest: {
      auto values = decode(request, "server");
      if (!values.ok()) return values.error();
      for (auto& [key, value] : values.value()) store_[key] = std::move(value);
      return rendezvous_.send(MessageType::kPushResponse, {});
    }
    case MessageType::kPullRequest: {
      KeyValues found;
      for (size_t i = 0; i < request.segments.at(0).size() / 8; ++i) {
        const auto key = read_at<uint64_t>(request.segments.at(0), i);
        auto it = store_.find(key);
        found[key] = it == store_.end() ? std::vector<std::byte>() : it->second;
      }
      const EncodedValues encoded = encode(found);
      return rendezvous_.send(MessageType::kPullResponse, spans(encoded));
    }
    case MessageType::kPullResponse:
    case MessageType::kPushResponse:
      return ProtocolViolation{std::string(contract_of(request.type).name),
                               "message type",
                               0,
                               static_cast<uint64_t>(request.type),
                               "server",
                               "a server receives requests only"}
          .to_error();
  }
  return Error{ErrorCode::kInternal, "unknown message type"};
}

Status KvServer::serve(size_t requests) {
  for (size_t served = 0; served < requests; ++served) {
    auto request = rendezvous_.receive();
    Status handled = request.ok() ? handle(request.value()) : Status{request.error()};
    if (handled.ok()) continue;
    if (handled.error().code != ErrorCode::kProtocolViolation) return handled;
    // Rejected and recorded; the next client is served.
    violations_.push_back(handled.error().message);
  }
  return {};
}

}  // namespace faultline::protocols::kv
