#include "faultline/protocols/kv/rendezvous.hpp"

#include <algorithm>
#include <cstring>

#include "control_frame.hpp"
#include "faultline/transports/memory_provider.hpp"

namespace faultline::protocols::kv {

namespace {

using transports::Completion;
using transports::Opcode;
using transports::Segment;

constexpr size_t kSlotBytes = 192;
constexpr size_t kReceiveSlots = 16;
constexpr uint64_t kRecvBase = 1000;  // wr_id of control receive slot i: kRecvBase + i
constexpr uint64_t kControlSend = 1;  // wr_id of a control send
constexpr uint64_t kWriteBase = 100;  // wr_id of the write of segment i: kWriteBase + i

std::string field_text(const ControlFrame& frame) {
  return std::string(frame.field.data(), strnlen(frame.field.data(), frame.field.size()));
}

}  // namespace

struct Rendezvous::Impl {
  transports::Device& device;
  transports::Endpoint& endpoint;
  RendezvousOptions options;
  std::shared_ptr<std::byte[]> arena;
  std::unique_ptr<transports::MemoryRegion> arena_region;
  std::shared_ptr<std::byte[]> slots;  // kReceiveSlots receive slots, then one send slot
  std::unique_ptr<transports::MemoryRegion> slots_region;
  std::deque<ControlFrame> frames;  // control frames received, not yet consumed
  std::deque<Completion> pending;   // other completions not yet consumed
  std::vector<std::string> events;
  uint32_t next_request = 1;

  Impl(transports::Device& d, transports::Endpoint& e, RendezvousOptions o)
      : device(d), endpoint(e), options(std::move(o)) {}

  size_t half() const { return options.arena_bytes / 2; }
  std::byte* send_staging() const { return arena.get(); }
  std::byte* landing() const { return arena.get() + half(); }
  std::byte* slot(size_t i) const { return slots.get() + i * kSlotBytes; }

  Status post_slot(size_t i) {
    Segment segment{slot(i), kSlotBytes, slots_region.get()};
    return endpoint.post_recv({kRecvBase + i, {&segment, 1}});
  }

  // One completion, checked: anything but SUCCESS is an error naming it. A control frame is
  // kept in `frames` and reported as nullopt, so a caller waiting for one looks again.
  // `from_pending`: hand out completions set aside earlier first (not when looking for frames,
  // which only a poll brings).
  Result<std::optional<Completion>> next(std::chrono::steady_clock::time_point deadline,
                                         bool from_pending = true) {
    if (from_pending && !pending.empty()) {
      Completion completion = pending.front();
      pending.pop_front();
      return std::optional<Completion>(completion);
    }
    for (;;) {
      Completion completion;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      auto polled = endpoint.poll({&completion, 1}, std::max(left, std::chrono::milliseconds(0)));
      if (!polled.ok()) return std::move(polled).take_error();
      if (polled.value() == 0) {
        return Error{ErrorCode::kTimeout, options.side + ": no completion within " +
                                              std::to_string(options.timeout.count()) + " ms"};
      }
      if (!completion.ok()) {
        return Error{ErrorCode::kNativeError,
                     options.side + ": completion error: " + completion.describe()};
      }
      // A control frame: keep it, give its slot back.
      if (completion.op == Opcode::kRecv && completion.wr_id >= kRecvBase &&
          completion.wr_id < kRecvBase + kReceiveSlots) {
        const size_t index = completion.wr_id - kRecvBase;
        ControlFrame frame;
        std::memcpy(&frame, slot(index), sizeof frame);
        frames.push_back(frame);
        if (Status reposted = post_slot(index); !reposted.ok()) return reposted.error();
        return std::optional<Completion>();
      }
      // A write-with-immediate that consumed a control receive (verbs) gives the slot back too.
      if (completion.op == Opcode::kRecvRdmaWithImm &&
          device.info().capabilities.write_imm_consumes_recv && completion.wr_id >= kRecvBase &&
          completion.wr_id < kRecvBase + kReceiveSlots) {
        if (Status reposted = post_slot(completion.wr_id - kRecvBase); !reposted.ok())
          return reposted.error();
      }
      return std::optional<Completion>(completion);
    }
  }

  // Waits for the completion `matches` accepts; others wait in `pending` for their turn.
  template <typename Predicate>
  Result<Completion> wait_completion(Predicate matches) {
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    std::deque<Completion> skipped;
    for (;;) {
      auto completion = next(deadline);
      if (!completion.ok()) {
        pending.insert(pending.begin(), skipped.begin(), skipped.end());
        return std::move(completion).take_error();
      }
      if (!completion.value()) continue;  // a control frame, kept for its reader
      if (matches(*completion.value())) {
        pending.insert(pending.begin(), skipped.begin(), skipped.end());
        return *completion.value();
      }
      skipped.push_back(*completion.value());
    }
  }

  template <typename Predicate>
  Result<ControlFrame> wait_frame(Predicate matches) {
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    for (;;) {
      for (auto it = frames.begin(); it != frames.end(); ++it) {
        if (matches(*it)) {
          ControlFrame frame = *it;
          frames.erase(it);
          return frame;
        }
      }
      auto completion = next(deadline, false);
      if (!completion.ok()) return std::move(completion).take_error();
      if (completion.value()) pending.push_back(*completion.value());
    }
  }

  Status send_frame(const ControlFrame& frame) {
    std::byte* slot_bytes = slot(kReceiveSlots);
    std::memcpy(slot_bytes, &frame, sizeof frame);
    Segment segment{slot_bytes, sizeof frame, slots_region.get()};
    const bool inline_frame = endpoint.config().max_inline >= sizeof frame;
    FAULTLINE_RETURN_IF_ERROR(endpoint.post_send({.wr_id = kControlSend,
                                                  .op = Opcode::kSend,
                                                  .segments = {&segment, 1},
                                                  .inline_data = inline_frame}));
    auto sent = wait_completion(
        [](const Completion& c) { return c.op == Opcode::kSend && c.wr_id == kControlSend; });
    return sent.ok() ? Status{} : Status{sent.error()};
  }

  Status reject(const ControlFrame& announce, const ProtocolViolation& violation) {
    ControlFrame frame;
    frame.kind = FrameKind::kReject;
    frame.message_type = announce.message_type;
    frame.request_id = announce.request_id;
    frame.expected = violation.expected;
    frame.actual = violation.actual;
    std::strncpy(frame.field.data(), violation.field.c_str(), frame.field.size() - 1);
    events.push_back("rejected " + violation.describe());
    return send_frame(frame);
  }
};

Rendezvous::Rendezvous(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Rendezvous::~Rendezvous() = default;

const std::vector<std::string>& Rendezvous::events() const { return impl_->events; }

void Rendezvous::set_mutations(std::vector<Mutation> mutations) {
  impl_->options.mutations = std::move(mutations);
}

Result<std::unique_ptr<Rendezvous>> Rendezvous::create(transports::Device& device,
                                                       transports::Endpoint& endpoint,
                                                       RendezvousOptions options) {
  auto impl = std::make_unique<Impl>(device, endpoint, std::move(options));
  transports::HostMemoryProvider host;
  auto arena = host.allocate(impl->options.arena_bytes, 4096);
  if (!arena.ok()) return std::move(arena).take_error();
  impl->arena = arena.value();
  auto arena_region =
      device.register_memory(impl->arena.get(), impl->options.arena_bytes, transports::kAccessAll);
  if (!arena_region.ok()) return std::move(arena_region).take_error();
  impl->arena_region = std::move(arena_region).value();
  auto slots = host.allocate((kReceiveSlots + 1) * kSlotBytes, 4096);
  if (!slots.ok()) return std::move(slots).take_error();
  impl->slots = slots.value();
  std::memset(impl->slots.get(), 0, (kReceiveSlots + 1) * kSlotBytes);
  auto slots_region = device.register_memory(impl->slots.get(), (kReceiveSlots + 1) * kSlotBytes,
                                             transports::kAccessLocalWrite);
  if (!slots_region.ok()) return std::move(slots_region).take_error();
  impl->slots_region = std::move(slots_region).value();
  for (size_t i = 0; i < kReceiveSlots; ++i) {
    FAULTLINE_RETURN_IF_ERROR(impl->post_slot(i));
  }
  return std::unique_ptr<Rendezvous>(new Rendezvous(std::move(impl)));
}

Status Rendezvous::send(MessageType type, std::vector<std::span<const std::byte>> segments) {
  Impl& self = *impl_;
  const SegmentContract& contract = contract_of(type);
  ControlFrame frame;
  frame.message_type = static_cast<uint8_t>(type);
  frame.request_id = self.next_request++;
  for (const Mutation& mutation : self.options.mutations) {
    if (mutation.message != type) continue;
    switch (mutation.kind) {
      case Mutation::Kind::kDropSegment:
        for (uint32_t i = 0; i < contract.segment_count && i < segments.size(); ++i) {
          if (contract.segments[i] == mutation.target) {
            segments.erase(segments.begin() + i);
            self.events.push_back("mutation: dropped segment " + mutation.target + " of " +
                                  std::string(contract.name));
            break;
          }
        }
        break;
      case Mutation::Kind::kAddSegment:
        if (!segments.empty() && segments.size() < kMaxSegments) {
          segments.push_back(segments.back());
          self.events.push_back("mutation: added a segment to " + std::string(contract.name));
        }
        break;
      case Mutation::Kind::kReorderSegments:
        if (segments.size() >= 2) {
          std::swap(segments[0], segments[1]);
          self.events.push_back("mutation: swapped the first two segments of " +
                                std::string(contract.name));
        }
        break;
      case Mutation::Kind::kCorruptHeader: break;  // applied to the frame below
    }
  }
  if (segments.size() > kMaxSegments) {
    return Error{ErrorCode::kInvalidArgument, "at most 4 segments per message"};
  }
  frame.segment_count = static_cast<uint16_t>(segments.size());
  uint64_t total = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    frame.lengths[i] = segments[i].size();
    total += segments[i].size();
  }
  if (total > self.half()) {
    return Error{ErrorCode::kLimitExceeded, std::string(contract.name) + " of " +
                                                std::to_string(total) + " bytes exceeds the " +
                                                std::to_string(self.half()) + "-byte staging"};
  }
  for (const Mutation& mutation : self.options.mutations) {
    if (mutation.message != type || mutation.kind != Mutation::Kind::kCorruptHeader) continue;
    if (mutation.target == "magic") frame.magic ^= 0xffU;
    if (mutation.target == "segment_count") ++frame.segment_count;
    self.events.push_back("mutation: corrupted header field " + mutation.target + " of " +
                          std::string(contract.name));
  }
  FAULTLINE_RETURN_IF_ERROR(self.send_frame(frame));
  self.events.push_back("announced " + std::string(contract.name) + " with " +
                        std::to_string(segments.size()) + " segments");
  // Only the announced data moves; nothing follows an announce of no data.
  if (std::all_of(segments.begin(), segments.end(), [](auto s) { return s.empty(); })) return {};

  auto answer = self.wait_frame([&](const ControlFrame& f) {
    return f.request_id == frame.request_id &&
           (f.kind == FrameKind::kGrant || f.kind == FrameKind::kReject);
  });
  if (!answer.ok()) return answer.error();
  if (answer->kind == FrameKind::kReject) {
    const std::string peer = self.options.side == "worker" ? "server" : "worker";
    ProtocolViolation violation{std::string(contract.name),
                                field_text(answer.value()),
                                answer->expected,
                                answer->actual,
                                peer,
                                ""};
    self.events.push_back("rejected by the " + peer + ": " + violation.describe());
    return violation.to_error();
  }
  self.events.emplace_back("granted by the peer");
  // The segments, written where the grant says; the last non-empty one carries the signal.
  size_t last = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (!segments[i].empty()) last = i;
  }
  size_t offset = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].empty()) continue;
    std::memcpy(self.send_staging() + offset, segments[i].data(), segments[i].size());
    Segment local{self.send_staging() + offset, static_cast<uint32_t>(segments[i].size()),
                  self.arena_region.get()};
    transports::WorkRequest write{
        .wr_id = kWriteBase + i,
        .op = i == last ? Opcode::kRdmaWriteWithImm : Opcode::kRdmaWrite,
        .segments = {&local, 1},
        .remote = {answer->addresses[i], answer->keys[i], segments[i].size()}};
    if (i == last) write.imm = frame.request_id;
    FAULTLINE_RETURN_IF_ERROR(self.endpoint.post_send(write));
    offset += segments[i].size();
  }
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].empty()) continue;
    auto written = self.wait_completion([&](const Completion& c) {
      return (c.op == Opcode::kRdmaWrite || c.op == Opcode::kRdmaWriteWithImm) &&
             c.wr_id == kWriteBase + i;
    });
    if (!written.ok()) return written.error();
  }
  self.events.push_back("sent " + std::string(contract.name));
  return {};
}

Result<Message> Rendezvous::receive() {
  Impl& self = *impl_;
  auto announce =
      self.wait_frame([](const ControlFrame& f) { return f.kind == FrameKind::kAnnounce; });
  if (!announce.ok()) return std::move(announce).take_error();
  const ControlFrame& frame = announce.value();
  if (frame.magic != kFrameMagic) {
    ProtocolViolation violation{"control frame", "header magic",    kFrameMagic,
                                frame.magic,     self.options.side, "not a kv frame"};
    FAULTLINE_RETURN_IF_ERROR(self.reject(frame, violation));
    return violation.to_error();
  }
  if (frame.message_type > static_cast<uint8_t>(MessageType::kPushResponse)) {
    ProtocolViolation violation{"control frame",    "message type",    3,
                                frame.message_type, self.options.side, "unknown message type"};
    FAULTLINE_RETURN_IF_ERROR(self.reject(frame, violation));
    return violation.to_error();
  }
  const auto type = static_cast<MessageType>(frame.message_type);
  const size_t count = std::min<size_t>(frame.segment_count, kMaxSegments);
  std::vector<uint64_t> lengths(frame.lengths.begin(), frame.lengths.begin() + count);
  if (frame.segment_count > kMaxSegments) lengths.resize(frame.segment_count, 0);
  if (auto violation = check_announce(type, lengths, self.options.side)) {
    FAULTLINE_RETURN_IF_ERROR(self.reject(frame, *violation));
    return violation->to_error();
  }
  const std::string name(contract_of(type).name);
  Message message{type, {}};
  uint64_t total = 0;
  for (uint64_t length : lengths) total += length;
  if (total == 0) {
    self.events.push_back("received " + name);
    return message;
  }
  if (total > self.half()) {
    ProtocolViolation violation{name,  "total length",    self.half(),
                                total, self.options.side, "larger than the landing area"};
    FAULTLINE_RETURN_IF_ERROR(self.reject(frame, violation));
    return violation.to_error();
  }
  ControlFrame grant;
  grant.kind = FrameKind::kGrant;
  grant.message_type = frame.message_type;
  grant.request_id = frame.request_id;
  grant.segment_count = frame.segment_count;
  uint64_t offset = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const auto remote = self.arena_region->remote(self.half() + offset, lengths[i]);
    grant.addresses[i] = remote.addr;
    grant.keys[i] = remote.key;
    grant.lengths[i] = lengths[i];
    offset += lengths[i];
  }
  FAULTLINE_RETURN_IF_ERROR(self.send_frame(grant));
  self.events.push_back("granted " + name + " " + std::to_string(total) + " bytes");
  auto signal = self.wait_completion([&](const Completion& c) {
    return c.op == Opcode::kRecvRdmaWithImm && c.imm && *c.imm == frame.request_id;
  });
  if (!signal.ok()) return std::move(signal).take_error();
  offset = 0;
  for (uint64_t length : lengths) {
    message.segments.emplace_back(self.landing() + offset, self.landing() + offset + length);
    offset += length;
  }
  self.events.push_back("received " + name + " with " + std::to_string(lengths.size()) +
                        " segments");
  return message;
}

}  // namespace faultline::protocols::kv
