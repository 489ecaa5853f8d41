#include "faultline/protocols/kv/rendezvous.hpp"

#include <algorithm>
#include <cstring>

#include "control_frame.hpp"
#include "faultline/core/fnv1a.hpp"
#include "faultline/protocols/completion_tracker.hpp"
#include "faultline/protocols/receive_slots.hpp"
#include "faultline/transports/registered_buffer.hpp"

namespace faultline::protocols::kv {

namespace {

using transports::Completion;
using transports::Opcode;
using transports::Segment;

constexpr size_t kSlotBytes = kMaxFrameBytes;
constexpr size_t kReceiveSlots = 16;
// The kinds of work the rendezvous tracks.
constexpr uint32_t kControlReceive = 1;  // index: the receive slot
constexpr uint32_t kControlSend = 2;
constexpr uint32_t kWrite = 3;  // index: the segment

std::string field_text(const ControlFrame& frame) {
  return std::string(frame.field.data(), strnlen(frame.field.data(), frame.field.size()));
}

// The size the contract gives a frame of this kind and message type. Whether a frame goes
// inline is decided from it, as StepMesh's sender decided from the layout it meant to send:
// a sender that breaks the contract with a larger frame finds out at the post.
size_t planned_bytes(const ControlFrame& frame) {
  size_t entries = 0;
  if (frame.message_type <= static_cast<uint8_t>(MessageType::kPushResponse)) {
    entries = contract_of(static_cast<MessageType>(frame.message_type)).segment_count;
  }
  return encoded_size(frame.kind, entries);
}

uint64_t digest_of(std::span<const std::byte> bytes) { return fnv1a(bytes); }

}  // namespace

struct Rendezvous::Impl {
  transports::Device& device;
  transports::Endpoint& endpoint;
  RendezvousOptions options;
  CompletionTracker tracker;
  transports::RegisteredBuffer arena;      // half for sending, half for receiving
  std::optional<ReceiveSlots> slots;       // control frames arrive here
  transports::RegisteredBuffer send_slot;  // control frames leave from here
  std::deque<ControlFrame> frames;         // control frames received, not yet consumed
  std::deque<Completion> pending;          // other completions not yet consumed
  std::vector<std::string> events;
  uint32_t next_request = 1;

  Impl(transports::Device& d, transports::Endpoint& e, RendezvousOptions o)
      : device(d), endpoint(e), options(std::move(o)), tracker(options.side, e) {}

  size_t half() const { return options.arena_bytes / 2; }
  std::byte* send_staging() const { return arena.data(); }
  std::byte* landing() const { return arena.data() + half(); }

  Status post_slot(size_t i) { return slots->post(i, endpoint, tracker, kControlReceive); }

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
      // An incoming write with immediate consumes a posted receive only where the transport
      // says so (verbs); elsewhere it carries no work request of ours.
      if (completion.op == Opcode::kRecvRdmaWithImm &&
          !device.info().capabilities.write_imm_consumes_recv) {
        return std::optional<Completion>(completion);
      }
      auto work = tracker.complete(completion);
      if (!work.ok()) return std::move(work).take_error();
      if (work.value().kind != kControlReceive) return std::optional<Completion>(completion);
      // A control frame: keep it and give its slot back; a write-with-immediate that
      // consumed a control receive gives the slot back too.
      const size_t index = work.value().index;
      if (completion.op == Opcode::kRecv) {
        const size_t length = std::min<size_t>(completion.byte_len, kSlotBytes);
        if (auto frame = decode({slots->slot(index), length})) {
          frames.push_back(*frame);
        } else {
          events.push_back("ignored a control frame of " + std::to_string(length) +
                           " bytes, shorter than a header");
        }
      }
      if (Status reposted = post_slot(index); !reposted.ok()) return reposted.error();
      if (completion.op == Opcode::kRecv) return std::optional<Completion>();
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

  // Posts `request` tracked as `work`; the wr_id to wait for.
  Result<uint64_t> post_tracked(transports::WorkRequest request, CompletionTracker::Work work) {
    request.wr_id = tracker.post(work);
    Status posted = endpoint.post_send(request);
    if (!posted.ok()) {
      tracker.cancel(request.wr_id);
      return std::move(posted).take_error();
    }
    return request.wr_id;
  }

  // Whether `frame` is posted inline: when the frame its contract plans fits the granted inline.
  bool goes_inline(const ControlFrame& frame) const {
    return planned_bytes(frame) <= endpoint.config().max_inline;
  }

  Status send_frame(const ControlFrame& frame) {
    const size_t bytes = encode(frame, {send_slot.data(), kSlotBytes});
    const Segment segment = send_slot.segment(0, bytes);
    const bool inline_frame = goes_inline(frame);
    auto id =
        post_tracked({.op = Opcode::kSend, .segments = {&segment, 1}, .inline_data = inline_frame},
                     {kControlSend, 0});
    if (!id.ok()) return std::move(id).take_error();
    auto sent = wait_completion([id = id.value()](const Completion& c) { return c.wr_id == id; });
    return sent.ok() ? Status{} : Status{sent.error()};
  }

  // The segments, RDMA-written where `grant` says; the last non-empty one carries the
  // signal (immediate `request_id`). Returns once every write completed.
  Status write_segments(const std::vector<std::span<const std::byte>>& segments,
                        const ControlFrame& grant, uint32_t request_id) {
    size_t last = 0;
    for (size_t i = 0; i < segments.size(); ++i) {
      if (!segments[i].empty()) last = i;
    }
    std::vector<uint64_t> ids;
    size_t offset = 0;
    for (size_t i = 0; i < segments.size(); ++i) {
      if (segments[i].empty()) continue;
      std::memcpy(send_staging() + offset, segments[i].data(), segments[i].size());
      const Segment local = arena.segment(offset, segments[i].size());
      transports::WorkRequest write{
          .op = i == last ? Opcode::kRdmaWriteWithImm : Opcode::kRdmaWrite,
          .segments = {&local, 1},
          .remote = {grant.addresses[i], grant.keys[i], segments[i].size()}};
      if (i == last) write.imm = request_id;
      auto id = post_tracked(write, {kWrite, i});
      if (!id.ok()) return std::move(id).take_error();
      ids.push_back(id.value());
      offset += segments[i].size();
    }
    for (uint64_t id : ids) {
      auto written = wait_completion([id](const Completion& c) { return c.wr_id == id; });
      if (!written.ok()) return written.error();
    }
    return {};
  }

  // The segments that landed for `announce`, each checked against its announced digest.
  Result<std::vector<std::vector<std::byte>>> landed_segments(
      const ControlFrame& announce, MessageType type, const std::vector<uint64_t>& lengths) {
    std::vector<std::vector<std::byte>> segments;
    size_t offset = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
      const std::span<const std::byte> arrived(landing() + offset, lengths[i]);
      const uint64_t digest = digest_of(arrived);
      if (digest != announce.digests[i]) {
        const SegmentContract& contract = contract_of(type);
        ProtocolViolation violation{std::string(contract.name),
                                    "segment " + std::string(contract.segments[i]) + " digest",
                                    announce.digests[i],
                                    digest,
                                    options.side,
                                    "the bytes that arrived are not the bytes announced"};
        events.push_back("rejected " + violation.describe());
        return violation.to_error();
      }
      segments.emplace_back(arrived.begin(), arrived.end());
      offset += lengths[i];
    }
    return segments;
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
  auto arena = transports::RegisteredBuffer::allocate(device, impl->options.arena_bytes,
                                                      transports::kAccessAll);
  if (!arena.ok()) return std::move(arena).take_error();
  impl->arena = std::move(arena).value();
  auto slots = ReceiveSlots::create(device, kReceiveSlots, kSlotBytes);
  if (!slots.ok()) return std::move(slots).take_error();
  impl->slots = std::move(slots).value();
  auto send_slot =
      transports::RegisteredBuffer::allocate(device, kSlotBytes, transports::kAccessLocalWrite);
  if (!send_slot.ok()) return std::move(send_slot).take_error();
  impl->send_slot = std::move(send_slot).value();
  for (size_t i = 0; i < kReceiveSlots; ++i) {
    FAULTLINE_RETURN_IF_ERROR(impl->post_slot(i));
  }
  return std::unique_ptr<Rendezvous>(new Rendezvous(std::move(impl)));
}

namespace {

// The segment mutations of `mutations` for `type`, applied to `segments`; each is an event.
void mutate_segments(const std::vector<Mutation>& mutations, MessageType type,
                     std::vector<std::span<const std::byte>>& segments,
                     std::vector<std::string>& events) {
  const SegmentContract& contract = contract_of(type);
  for (const Mutation& mutation : mutations) {
    if (mutation.message != type) continue;
    switch (mutation.kind) {
      case Mutation::Kind::kDropSegment:
        for (uint32_t i = 0; i < contract.segment_count && i < segments.size(); ++i) {
          if (contract.segments[i] == mutation.target) {
            segments.erase(segments.begin() + i);
            events.push_back("mutation: dropped segment " + mutation.target + " of " +
                             std::string(contract.name));
            break;
          }
        }
        break;
      case Mutation::Kind::kAddSegment:
        if (!segments.empty() && segments.size() < kMaxSegments) {
          segments.push_back(segments.back());
          events.push_back("mutation: added a segment to " + std::string(contract.name));
        }
        break;
      case Mutation::Kind::kReorderSegments:
        if (segments.size() >= 2) {
          std::swap(segments[0], segments[1]);
          events.push_back("mutation: swapped the first two segments of " +
                           std::string(contract.name));
        }
        break;
      case Mutation::Kind::kCorruptHeader: break;  // applied to the frame (mutate_header)
    }
  }
}

// The header mutations of `mutations` for `type`, applied to `frame`.
void mutate_header(const std::vector<Mutation>& mutations, MessageType type, ControlFrame& frame,
                   std::vector<std::string>& events) {
  for (const Mutation& mutation : mutations) {
    if (mutation.message != type || mutation.kind != Mutation::Kind::kCorruptHeader) continue;
    if (mutation.target == "magic") frame.magic ^= 0xffU;
    if (mutation.target == "segment_count") ++frame.segment_count;
    events.push_back("mutation: corrupted header field " + mutation.target + " of " +
                     std::string(contract_of(type).name));
  }
}

}  // namespace

Status Rendezvous::send(MessageType type, std::vector<std::span<const std::byte>> segments) {
  Impl& self = *impl_;
  const SegmentContract& contract = contract_of(type);
  ControlFrame frame;
  frame.message_type = static_cast<uint8_t>(type);
  frame.request_id = self.next_request++;
  mutate_segments(self.options.mutations, type, segments, self.events);
  if (segments.size() > kMaxSegments) {
    return Error{ErrorCode::kInvalidArgument, "at most 4 segments per message"};
  }
  frame.segment_count = static_cast<uint16_t>(segments.size());
  frame.entries = segments.size();
  uint64_t total = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    frame.lengths[i] = segments[i].size();
    frame.digests[i] = digest_of(segments[i]);
    total += segments[i].size();
  }
  if (total > self.half()) {
    return Error{ErrorCode::kLimitExceeded, std::string(contract.name) + " of " +
                                                std::to_string(total) + " bytes exceeds the " +
                                                std::to_string(self.half()) + "-byte staging"};
  }
  mutate_header(self.options.mutations, type, frame, self.events);
  const bool inline_frame = self.goes_inline(frame);
  const size_t bytes = encoded_size(FrameKind::kAnnounce, frame.entries);
  const std::string announce = "announce of " + std::string(contract.name) + " (" +
                               std::to_string(bytes) + " bytes" +
                               (inline_frame ? ", posted inline" : "") + ")";
  if (Status sent = self.send_frame(frame); !sent.ok()) {
    Error error = sent.error();
    self.events.push_back(announce + " failed: " + error.message);
    error.message = announce + ": " + error.message;
    if (bytes > planned_bytes(frame)) {
      error.hint = "the announce is larger than the " + std::to_string(planned_bytes(frame)) +
                   " bytes its contract plans: the sender's segment layout breaks the " +
                   std::string(contract.name) +
                   " contract; with inline off the receiver's check names the violation";
    }
    return error;
  }
  self.events.push_back("announced " + std::string(contract.name) + " with " +
                        std::to_string(segments.size()) + " segments" +
                        (inline_frame ? " inline" : ""));
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
  FAULTLINE_RETURN_IF_ERROR(self.write_segments(segments, answer.value(), frame.request_id));
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
  grant.entries = lengths.size();
  uint64_t offset = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const auto remote = self.arena.region->remote(self.half() + offset, lengths[i]);
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
  auto segments = self.landed_segments(frame, type, lengths);
  if (!segments.ok()) return std::move(segments).take_error();
  message.segments = std::move(segments).value();
  self.events.push_back("received " + name + " with " + std::to_string(lengths.size()) +
                        " segments");
  return message;
}

}  // namespace faultline::protocols::kv
