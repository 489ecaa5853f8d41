#include "builtin_pair_side.hpp"

#include "builtin_steps.hpp"
#include "faultline/core/hex.hpp"
#include "faultline/transports/data_pattern.hpp"
#include "faultline/transports/json.hpp"

namespace faultline::harness {

using namespace transports;

PairSide::Outcome PairSide::connect(Device& device, const EndpointConfig& config,
                                    size_t message_bytes, size_t region_bytes) {
  auto endpoint = device.create_endpoint(config);
  if (!endpoint.ok()) return harness_error(endpoint.error());
  endpoint_ = std::move(endpoint).value();
  for (auto [buffer, size] :
       {std::pair{&send_buffer_, message_bytes}, std::pair{&recv_buffer_, message_bytes},
        std::pair{&region_, region_bytes}}) {
    auto made = make_buffer(device, size);
    if (!made.ok()) return harness_error(made.error());
    *buffer = std::move(made).value();
  }
  const auto own_address = endpoint_->address();
  nlohmann::json info = FirstContact::own_info(device.info().name);
  info["address"] = to_hex(own_address);
  info["region"] = region_.region->remote();
  auto peer = context_.link.exchange(info);
  if (!peer.ok()) return harness_error(peer.error());
  try {
    peer->at("region").get_to(peer_region_);
    const auto peer_address = from_hex(peer->at("address"));
    first_contact_.joined(own_address, peer_address, device.info().name, *peer);
    if (Status connected = endpoint_->connect(peer_address); !connected.ok())
      return harness_error(connected.error());
  } catch (const nlohmann::json::exception& e) {
    return harness_error(
        Error{ErrorCode::kProtocolViolation, std::string("peer info: ") + e.what()});
  }
  if (Status posted = repost(); !posted.ok()) return harness_error(posted.error());
  if (Status ready = context_.link.barrier("connected"); !ready.ok())
    return harness_error(ready.error());
  return std::nullopt;
}

Status PairSide::repost() {
  const Segment whole = recv_buffer_.whole();
  return endpoint_->post_recv({1, {&whole, 1}});
}

PairSide::Outcome PairSide::expect(Opcode op, uint32_t bytes) {
  return expect_completion(*endpoint_, first_contact_, op, bytes, timeout_, held_, watcher_);
}

PairSide::Outcome PairSide::send(size_t bytes, unsigned seed, uint64_t wr_id) {
  fill_pattern(send_buffer_.data(), bytes, seed);
  const Segment message = send_buffer_.segment(0, bytes);
  if (Status s =
          endpoint_->post_send({.wr_id = wr_id, .op = Opcode::kSend, .segments = {&message, 1}});
      !s.ok())
    return harness_error(s.error());
  return expect(Opcode::kSend, 0);
}

PairSide::Outcome PairSide::receive(size_t bytes, unsigned seed, const std::string& what) {
  if (auto bad = expect(Opcode::kRecv, static_cast<uint32_t>(bytes))) return bad;
  if (const size_t at = first_pattern_mismatch(recv_buffer_.data(), bytes, seed); at != bytes) {
    return failure(what + " of " + std::to_string(bytes) + " bytes as sent",
                   "byte " + std::to_string(at) + " differs", "send/recv data check");
  }
  if (Status s = repost(); !s.ok()) return harness_error(s.error());
  return std::nullopt;
}

PairSide::Outcome PairSide::write_region(size_t bytes, size_t piece, unsigned seed) {
  fill_pattern(region_.data(), bytes, seed);
  for (size_t offset = 0; offset < bytes; offset += piece) {
    const size_t length = std::min(piece, bytes - offset);
    const Segment part = region_.segment(offset, length);
    RemoteBuffer target = peer_region_;
    target.addr += offset;
    target.length = length;
    if (Status s = endpoint_->post_send({.wr_id = 1000 + offset / piece,
                                         .op = Opcode::kRdmaWrite,
                                         .segments = {&part, 1},
                                         .remote = target});
        !s.ok())
      return harness_error(s.error());
  }
  for (size_t offset = 0; offset < bytes; offset += piece)
    if (auto bad = expect(Opcode::kRdmaWrite, 0)) return bad;
  return std::nullopt;
}

PairSide::Outcome PairSide::ask_write_check(const std::string& what) {
  if (auto bad = send(1, 0, 101)) return bad;
  context_.link.step("receive the write check");
  if (auto bad = expect(Opcode::kRecv, 1)) return bad;
  if (recv_buffer_.data()[0] != std::byte{1})
    return failure(what + " lands intact", "the responder found other bytes", what + " data check");
  return std::nullopt;
}

PairSide::Outcome PairSide::answer_write_check(size_t bytes, unsigned seed,
                                               const std::string& what) {
  context_.link.step("wait for the " + what);
  if (auto bad = expect(Opcode::kRecv, 1)) return bad;
  const size_t at = first_pattern_mismatch(region_.data(), bytes, seed);
  if (Status s = repost(); !s.ok()) return harness_error(s.error());
  context_.link.step("answer the write check");
  send_buffer_.data()[0] = at == bytes ? std::byte{1} : std::byte{0};
  const Segment one_byte = send_buffer_.segment(0, 1);
  if (Status s =
          endpoint_->post_send({.wr_id = 102, .op = Opcode::kSend, .segments = {&one_byte, 1}});
      !s.ok())
    return harness_error(s.error());
  if (auto bad = expect(Opcode::kSend, 0)) return bad;
  if (at != bytes) {
    return failure(what + " lands intact", "byte " + std::to_string(at) + " differs",
                   what + " data check");
  }
  return std::nullopt;
}

PairSide::Outcome PairSide::finish() {
  if (Status done = context_.link.barrier("done"); !done.ok()) return harness_error(done.error());
  return std::nullopt;
}

}  // namespace faultline::harness
