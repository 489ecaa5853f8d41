#include "faultline/protocols/tagged/tagged_engine.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>

#include "faultline/protocols/completion_tracker.hpp"
#include "faultline/protocols/receive_slots.hpp"
#include "faultline/protocols/tagged/flow_control.hpp"
#include "faultline/protocols/tagged/tag_matcher.hpp"
#include "faultline/transports/registered_buffer.hpp"
#include "wire.hpp"

namespace faultline::protocols::tagged {

namespace {

using transports::Completion;
using transports::Opcode;
using transports::Segment;

// The kinds of work the engine tracks; the index is the slot, or the request of a write.
constexpr uint32_t kRecvSlot = 1;
constexpr uint32_t kSendSlot = 2;
constexpr uint32_t kWrite = 3;
constexpr size_t kExtraSendSlots = 4;

std::string key_text(TagKey key) {
  return "tag " + std::to_string(key.tag) + " seq " + std::to_string(key.seq);
}

}  // namespace

struct TaggedEngine::Impl {
  struct Part {  // one buffer of a receive
    TagKey key;
    std::span<std::byte> buffer;
    std::unique_ptr<transports::MemoryRegion> region;
    uint32_t token = 0;
    size_t length = 0;
    bool placed = false;              // rendezvous: the write's immediate arrived
    std::optional<size_t> announced;  // rendezvous: the kWritten frame arrived
    bool done = false;
  };
  struct Request {
    bool is_send = false;
    SendPath path = SendPath::kEager;
    TagKey key;                       // send
    std::span<const std::byte> data;  // rendezvous send
    std::unique_ptr<transports::MemoryRegion> region;
    std::vector<Part> parts;  // receive
    size_t parts_done = 0;
    bool done = false;
    std::optional<Error> error;
  };
  struct PendingWrite {
    RequestId request = 0;
    ReceiveEntry entry;
  };

  transports::Device& device;
  transports::Endpoint& endpoint;
  TaggedOptions options;
  CompletionTracker tracker;
  size_t slot_bytes = 0;
  std::optional<ReceiveSlots> recv_slots;
  transports::RegisteredBuffer send_slots;
  std::vector<size_t> free_send_slots;
  std::vector<RequestId> send_slot_request;  // the eager send a slot carries, or 0
  size_t in_flight = 0;                      // send-side work requests not yet completed

  CreditWindow credits;
  EagerQueue eager;
  std::deque<std::vector<std::byte>> control_frames;  // kReceives, kTruncated: header + body
  std::deque<PendingWrite> writes;
  TagSequencer send_seqs;
  TagMatcher matcher;
  std::map<TagKey, RequestId> waiting_for_buffer;  // rendezvous sends
  std::map<TagKey, ReceiveEntry> early_entries;    // buffers announced before their send
  std::map<uint32_t, ReceiveTarget> tokens;
  uint32_t next_token = 1;
  std::map<RequestId, Request> requests;
  RequestId next_request = 1;
  std::optional<Error> broken;
  TaggedStats stats;
  std::vector<std::string> events;

  Impl(transports::Device& d, transports::Endpoint& e, TaggedOptions o)
      : device(d),
        endpoint(e),
        options(std::move(o)),
        tracker(options.side, e),
        credits(options.receive_slots, options.receive_slots),
        eager(options.eager_queue_depth) {}

  std::byte* recv_slot(size_t i) const { return recv_slots->slot(i); }
  std::byte* send_slot(size_t i) const { return send_slots.data() + i * slot_bytes; }

  Status fail(ErrorCode code, const std::string& text) {
    if (!broken) {
      broken = Error{code, options.side + ": " + text};
      events.push_back("broken: " + text);
    }
    return *broken;
  }

  Status post_recv_slot(size_t i) { return recv_slots->post(i, endpoint, tracker, kRecvSlot); }

  bool can_post() const {
    return !free_send_slots.empty() && in_flight < endpoint.config().send_depth;
  }

  // Sends one frame from a free send slot. The header gets the credits to return.
  Status post_frame(FrameHeader header, std::span<const std::byte> body, RequestId eager_request) {
    const size_t slot = free_send_slots.back();
    free_send_slots.pop_back();
    header.credits = credits.take_returns();
    const size_t bytes = write_frame(send_slot(slot), header, body);
    send_slot_request[slot] = eager_request;
    const Segment segment = send_slots.segment(slot * slot_bytes, bytes);
    const uint64_t wr_id = tracker.post({kSendSlot, slot});
    Status posted =
        endpoint.post_send({.wr_id = wr_id, .op = Opcode::kSend, .segments = {&segment, 1}});
    if (!posted.ok()) {
      tracker.cancel(wr_id);
      return fail(posted.error().code, "posting a frame: " + posted.error().describe());
    }
    ++in_flight;
    credits.consume();
    return {};
  }

  void finish(RequestId id, std::optional<Error> error = std::nullopt) {
    auto found = requests.find(id);
    if (found == requests.end()) return;
    found->second.done = true;
    if (error && !found->second.error) found->second.error = std::move(error);
  }

  void finish_part(ReceiveTarget target, size_t length, std::optional<Error> error) {
    auto found = requests.find(target.request);
    if (found == requests.end() || target.index >= found->second.parts.size()) return;
    Request& request = found->second;
    Part& part = request.parts[target.index];
    if (part.done) return;
    part.done = true;
    part.length = length;
    if (part.token != 0) tokens.erase(part.token);
    if (error && !request.error) request.error = std::move(error);
    // A failed buffer fails the whole receive at once; the others need not be waited for.
    if (++request.parts_done == request.parts.size() || request.error) request.done = true;
  }

  // An eager payload for a matched receive buffer: copied if it fits.
  void deliver(ReceiveTarget target, std::span<const std::byte> payload) {
    auto found = requests.find(target.request);
    if (found == requests.end()) return;
    Part& part = found->second.parts[target.index];
    if (payload.size() > part.buffer.size()) {
      finish_part(target, 0,
                  Error{ErrorCode::kProtocolViolation,
                        options.side + ": message of " + std::to_string(payload.size()) +
                            " bytes (" + key_text(part.key) + ") does not fit the " +
                            std::to_string(part.buffer.size()) + "-byte receive buffer"});
      return;
    }
    if (!payload.empty()) std::memcpy(part.buffer.data(), payload.data(), payload.size());
    ++stats.eager_received;
    finish_part(target, payload.size(), std::nullopt);
  }

  void start_write(RequestId id, const ReceiveEntry& entry) { writes.push_back({id, entry}); }

  // What a peer's frame in receive slot `slot` says; `bytes` is how much arrived.
  Status handle_frame(size_t slot, size_t bytes) {
    auto decoded = decode_frame({recv_slot(slot), bytes});
    if (!decoded.ok()) return fail(ErrorCode::kProtocolViolation, decoded.error().message);
    const DecodedFrame& frame = decoded.value();
    credits.returned(frame.header.credits);
    switch (frame.header.kind) {
      case FrameKind::kEager: return eager_arrived(frame);
      case FrameKind::kReceives: return receives_arrived(frame);
      case FrameKind::kCredits: return {};
      case FrameKind::kWritten:
        return rendezvous_arrived(decode_written_token(frame), frame.header.length, std::nullopt);
      case FrameKind::kTruncated: {
        const TagKey key{frame.header.tag, frame.header.seq};
        if (auto target = matcher.take(key)) {
          finish_part(*target, 0,
                      Error{ErrorCode::kProtocolViolation,
                            options.side + ": the sender's message of " +
                                std::to_string(frame.header.length) + " bytes (" + key_text(key) +
                                ") does not fit this receive buffer"});
        }
        return {};
      }
    }
    return fail(ErrorCode::kProtocolViolation,
                "a frame of unknown kind " + std::to_string(static_cast<int>(frame.header.kind)));
  }

  Status eager_arrived(const DecodedFrame& frame) {
    const TagKey key{frame.header.tag, frame.header.seq};
    if (frame.header.length != frame.body.size() || frame.header.length > options.eager_threshold) {
      return fail(ErrorCode::kProtocolViolation,
                  "eager frame of " + key_text(key) + " says " +
                      std::to_string(frame.header.length) + " bytes, carries " +
                      std::to_string(frame.body.size()) + " (threshold " +
                      std::to_string(options.eager_threshold) + ")");
    }
    ReceiveTarget target;
    switch (matcher.arrive(key, frame.body, target)) {
      case TagMatcher::Arrival::kMatched: deliver(target, frame.body); break;
      case TagMatcher::Arrival::kUnexpected: ++stats.unexpected; break;
      case TagMatcher::Arrival::kDuplicate:
        return fail(ErrorCode::kProtocolViolation,
                    "a second eager message for " + key_text(key) +
                        ", which was already delivered (a duplicate or stale completion)");
    }
    return {};
  }

  Status receives_arrived(const DecodedFrame& frame) {
    auto entries = decode_receives(frame);
    if (!entries.ok()) return fail(ErrorCode::kProtocolViolation, entries.error().message);
    for (const ReceiveEntry& entry : entries.value()) {
      const TagKey entry_key{entry.tag, entry.seq};
      if (auto waiting = waiting_for_buffer.find(entry_key); waiting != waiting_for_buffer.end()) {
        start_write(waiting->second, entry);
        waiting_for_buffer.erase(waiting);
      } else if (!send_seqs.issued(entry_key)) {
        early_entries[entry_key] = entry;
      }  // else: that message went eagerly; the buffer is not needed
    }
    return {};
  }

  // Half of a rendezvous delivery: the write's immediate (`write`: the data is placed) or the
  // kWritten frame (`length`: how much). The receive buffer is done when both are in.
  Status rendezvous_arrived(uint32_t token, std::optional<size_t> length,
                            const std::optional<Completion>& write) {
    auto found = tokens.find(token);
    if (found == tokens.end()) {
      return fail(ErrorCode::kProtocolViolation,
                  (write ? "a write with immediate " : "a written notice for token ") +
                      std::to_string(token) +
                      " for no receive buffer (a duplicate or stale completion)" +
                      (write ? ": " + write->describe() : std::string()));
    }
    const ReceiveTarget target = found->second;
    Part& part = requests.at(target.request).parts[target.index];
    matcher.take(part.key);
    if (write) part.placed = true;
    if (length) part.announced = length;
    if (part.announced && *part.announced > part.buffer.size()) {
      return fail(ErrorCode::kProtocolViolation, "a write of " + std::to_string(*part.announced) +
                                                     " bytes (" + key_text(part.key) + ") into a " +
                                                     std::to_string(part.buffer.size()) +
                                                     "-byte buffer");
    }
    if (write && write->byte_len != 0 && part.announced && write->byte_len != *part.announced) {
      return fail(ErrorCode::kProtocolViolation, "the write of " + key_text(part.key) + " placed " +
                                                     std::to_string(write->byte_len) +
                                                     " bytes, the sender announced " +
                                                     std::to_string(*part.announced));
    }
    if (part.placed && part.announced) {
      ++stats.rendezvous_received;
      finish_part(target, *part.announced, std::nullopt);
    }
    return {};
  }

  Status handle(const Completion& completion) {
    if (!completion.ok()) {
      return fail(ErrorCode::kNativeError, "completion failed: " + completion.describe());
    }
    // An incoming write with immediate consumes a posted receive only where the transport
    // says so (verbs); elsewhere it carries no work request of ours.
    const bool tracked = completion.op != Opcode::kRecvRdmaWithImm ||
                         device.info().capabilities.write_imm_consumes_recv;
    if (!tracked) {
      credits.reposted();  // the sender spent a credit on the write all the same
      return rendezvous_arrived(completion.imm.value_or(0), std::nullopt, completion);
    }
    auto work = tracker.complete(completion);
    if (!work.ok()) return fail(ErrorCode::kProtocolViolation, work.error().message);
    const size_t index = work.value().index;
    switch (work.value().kind) {
      case kRecvSlot: {
        Status handled =
            completion.op == Opcode::kRecvRdmaWithImm
                ? rendezvous_arrived(completion.imm.value_or(0), std::nullopt, completion)
                : handle_frame(index, completion.byte_len);
        FAULTLINE_RETURN_IF_ERROR(post_recv_slot(index));
        credits.reposted();
        return handled;
      }
      case kSendSlot:
        if (in_flight > 0) --in_flight;
        free_send_slots.push_back(index);
        if (send_slot_request[index] != 0) finish(send_slot_request[index]);
        send_slot_request[index] = 0;
        return {};
      case kWrite:
        if (in_flight > 0) --in_flight;
        finish(index);
        return {};
    }
    return fail(ErrorCode::kInternal, "a tracked work request of unknown kind");
  }

  Status post_write(const PendingWrite& pending) {
    Request& request = requests.at(pending.request);
    const ReceiveEntry& entry = pending.entry;
    if (request.data.size() > entry.capacity) {
      control_frames.push_back(encode_truncated(entry.tag, entry.seq, request.data.size()));
      finish(pending.request,
             Error{ErrorCode::kProtocolViolation,
                   options.side + ": message of " + std::to_string(request.data.size()) +
                       " bytes (" + key_text(request.key) + ") does not fit the receiver's " +
                       std::to_string(entry.capacity) + "-byte buffer"});
      return {};
    }
    Segment local{const_cast<std::byte*>(request.data.data()),
                  static_cast<uint32_t>(request.data.size()), request.region.get()};
    const uint64_t wr_id = tracker.post({kWrite, pending.request});
    Status posted = endpoint.post_send({.wr_id = wr_id,
                                        .op = Opcode::kRdmaWriteWithImm,
                                        .segments = {&local, 1},
                                        .imm = entry.token,
                                        .remote = {entry.addr, entry.key, request.data.size()}});
    if (!posted.ok()) {
      tracker.cancel(wr_id);
      return fail(posted.error().code, "posting a write: " + posted.error().describe());
    }
    ++in_flight;
    credits.consume();
    ++stats.rendezvous_sent;
    control_frames.push_back(encode_written(entry, request.data.size()));
    return {};
  }

  // Transmits what the peer has room for: buffers of posted receives first, then rendezvous
  // writes, then queued eager messages, and a frame of returned credits when they piled up.
  Status pump() {
    while (!broken) {
      if (!control_frames.empty() && credits.can_send() && can_post()) {
        std::vector<std::byte> bytes = std::move(control_frames.front());
        control_frames.pop_front();
        auto frame = decode_frame(bytes);  // our own encoding: it decodes
        if (!frame.ok()) return fail(ErrorCode::kInternal, frame.error().message);
        FAULTLINE_RETURN_IF_ERROR(post_frame(frame.value().header, frame.value().body, 0));
      } else if (!writes.empty() && credits.can_send() &&
                 in_flight < endpoint.config().send_depth) {
        PendingWrite pending = writes.front();
        writes.pop_front();
        FAULTLINE_RETURN_IF_ERROR(post_write(pending));
      } else if (!eager.empty() && credits.can_send() && can_post()) {
        QueuedEager& item = eager.front();
        FrameHeader header{.kind = FrameKind::kEager,
                           .tag = item.key.tag,
                           .seq = item.key.seq,
                           .length = item.payload.size()};
        FAULTLINE_RETURN_IF_ERROR(post_frame(header, item.payload, item.request));
        ++stats.eager_sent;
        eager.pop();
      } else if (credits.return_due() && credits.can_return() && can_post()) {
        FAULTLINE_RETURN_IF_ERROR(post_frame({.kind = FrameKind::kCredits}, {}, 0));
        ++stats.credit_frames;
      } else {
        break;
      }
    }
    return broken ? Status{*broken} : Status{};
  }

  // Reaps what completed within `timeout` and transmits what now fits.
  Status drive(std::chrono::milliseconds timeout) {
    FAULTLINE_RETURN_IF_ERROR(pump());
    Completion completions[16];
    auto polled = endpoint.poll(completions, timeout);
    if (!polled.ok()) return fail(polled.error().code, "poll: " + polled.error().describe());
    for (size_t i = 0; i < polled.value(); ++i) {
      FAULTLINE_RETURN_IF_ERROR(handle(completions[i]));
    }
    return pump();
  }

  std::string describe_pending(std::span<const RequestId> ids) const {
    std::string text;
    size_t shown = 0;
    for (RequestId id : ids) {
      auto found = requests.find(id);
      if (found == requests.end() || found->second.done) continue;
      if (++shown > 8) {
        text += ", ...";
        break;
      }
      const Request& request = found->second;
      if (!text.empty()) text += ", ";
      if (request.is_send) {
        text +=
            "send " + key_text(request.key) +
            (request.path == SendPath::kEager ? " (eager, not yet sent)"
                                              : " (rendezvous, waiting for the receiver's buffer)");
      } else {
        text += "receive of";
        for (const Part& part : request.parts) {
          if (!part.done) text += " " + key_text(part.key);
        }
        text += " (no data yet)";
      }
    }
    return text;
  }
};

TaggedEngine::TaggedEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TaggedEngine::~TaggedEngine() = default;

Result<std::unique_ptr<TaggedEngine>> TaggedEngine::create(transports::Device& device,
                                                           transports::Endpoint& endpoint,
                                                           TaggedOptions options) {
  if (options.receive_slots < 2 || options.eager_queue_depth == 0) {
    return Error{ErrorCode::kInvalidArgument,
                 "tagged: receive_slots must be at least 2 and eager_queue_depth at least 1"};
  }
  if (options.receive_slots > endpoint.config().recv_depth) {
    return Error{ErrorCode::kInvalidArgument,
                 "tagged: " + std::to_string(options.receive_slots) +
                     " receive slots do not fit the endpoint's recv_depth " +
                     std::to_string(endpoint.config().recv_depth)};
  }
  auto impl = std::make_unique<Impl>(device, endpoint, std::move(options));
  Impl& self = *impl;
  self.slot_bytes = sizeof(FrameHeader) +
                    std::max(self.options.eager_threshold, kMaxGroup * sizeof(ReceiveEntry));
  const size_t send_count = self.options.receive_slots + kExtraSendSlots;
  const size_t recv_slot_bytes =
      self.slot_bytes - (self.options.slot_without_header ? sizeof(FrameHeader) : 0);
  auto recv_slots = ReceiveSlots::create(device, self.options.receive_slots, recv_slot_bytes);
  if (!recv_slots.ok()) return std::move(recv_slots).take_error();
  self.recv_slots = std::move(recv_slots).value();
  auto send_slots = transports::RegisteredBuffer::allocate(device, send_count * self.slot_bytes,
                                                           transports::kAccessLocalWrite);
  if (!send_slots.ok()) return std::move(send_slots).take_error();
  self.send_slots = std::move(send_slots).value();
  self.send_slot_request.assign(send_count, 0);
  for (size_t i = send_count; i > 0; --i) self.free_send_slots.push_back(i - 1);
  for (size_t i = 0; i < self.options.receive_slots; ++i) {
    FAULTLINE_RETURN_IF_ERROR(self.post_recv_slot(i));
  }
  return std::unique_ptr<TaggedEngine>(new TaggedEngine(std::move(impl)));
}

Result<TaggedEngine::RequestId> TaggedEngine::send(uint64_t tag, std::span<const std::byte> data) {
  Impl& self = *impl_;
  if (self.broken) return *self.broken;
  const RequestId id = self.next_request++;
  if (data.size() <= self.options.eager_threshold) {
    if (self.eager.full()) {
      ++self.stats.backoffs;
      const auto deadline = std::chrono::steady_clock::now() + self.options.timeout;
      while (self.eager.full()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
          return Error{ErrorCode::kTimeout, self.options.side + ": the eager queue stayed full (" +
                                                std::to_string(self.eager.capacity()) +
                                                " messages) for " +
                                                std::to_string(self.options.timeout.count()) +
                                                " ms: the peer returned no receive slots"};
        }
        FAULTLINE_RETURN_IF_ERROR(self.drive(std::min(left, std::chrono::milliseconds(50))));
      }
    }
    const TagKey key{tag, self.send_seqs.next(tag)};
    Impl::Request request{.is_send = true, .path = SendPath::kEager, .key = key};
    self.requests.emplace(id, std::move(request));
    QueuedEager item{id, key, std::vector<std::byte>(data.begin(), data.end())};
    self.eager.push(item);
    self.stats.eager_queue_high_water =
        std::max(self.stats.eager_queue_high_water, self.eager.high_water());
    FAULTLINE_RETURN_IF_ERROR(self.pump());
    return id;
  }
  auto region = self.device.register_memory(const_cast<std::byte*>(data.data()), data.size(),
                                            transports::kAccessLocalWrite);
  if (!region.ok()) return std::move(region).take_error();
  const TagKey key{tag, self.send_seqs.next(tag)};
  Impl::Request request{.is_send = true, .path = SendPath::kRendezvous, .key = key, .data = data};
  request.region = std::move(region).value();
  self.requests.emplace(id, std::move(request));
  if (auto early = self.early_entries.find(key); early != self.early_entries.end()) {
    self.start_write(id, early->second);
    self.early_entries.erase(early);
  } else {
    self.waiting_for_buffer[key] = id;
  }
  FAULTLINE_RETURN_IF_ERROR(self.pump());
  return id;
}

Result<TaggedEngine::RequestId> TaggedEngine::receive(std::vector<TaggedBuffer> group) {
  Impl& self = *impl_;
  if (self.broken) return *self.broken;
  if (group.empty() || group.size() > kMaxGroup) {
    return Error{ErrorCode::kInvalidArgument, self.options.side + ": a receive takes 1 to " +
                                                  std::to_string(kMaxGroup) + " buffers, not " +
                                                  std::to_string(group.size())};
  }
  const RequestId id = self.next_request++;
  Impl::Request& request = self.requests[id];
  request.parts.resize(group.size());
  std::vector<ReceiveEntry> entries;
  for (size_t i = 0; i < group.size(); ++i) {
    Impl::Part& part = request.parts[i];
    part.buffer = group[i].buffer;
    auto posted = self.matcher.post(group[i].tag, {id, i});
    part.key = posted.key;
    if (posted.waiting) {
      self.deliver({id, i}, *posted.waiting);
      continue;
    }
    ReceiveEntry entry{.tag = part.key.tag, .seq = part.key.seq, .capacity = part.buffer.size()};
    if (!part.buffer.empty()) {
      auto region = self.device.register_memory(part.buffer.data(), part.buffer.size(),
                                                transports::kAccessAll);
      if (!region.ok()) return std::move(region).take_error();
      part.region = std::move(region).value();
      const auto remote = part.region->remote();
      entry.addr = remote.addr;
      entry.key = remote.key;
    }
    part.token = self.next_token++;
    entry.token = part.token;
    self.tokens[part.token] = {id, i};
    entries.push_back(entry);
  }
  if (!entries.empty()) self.control_frames.push_back(encode_receives(entries));
  FAULTLINE_RETURN_IF_ERROR(self.pump());
  return id;
}

Status TaggedEngine::wait(std::span<const RequestId> ids) {
  Impl& self = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + self.options.timeout;
  for (;;) {
    if (self.broken) return *self.broken;
    bool all_done = true;
    for (RequestId id : ids) {
      auto found = self.requests.find(id);
      if (found == self.requests.end()) {
        return Error{ErrorCode::kInvalidArgument,
                     self.options.side + ": no request " + std::to_string(id)};
      }
      if (found->second.done && found->second.error) return *found->second.error;
      all_done = all_done && found->second.done;
    }
    if (all_done) return {};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return Error{ErrorCode::kTimeout, self.options.side + ": not done after " +
                                            std::to_string(self.options.timeout.count()) +
                                            " ms: " + self.describe_pending(ids)}
          .with_hint(
              "the peer never sent (or never posted a receive for) these tags: a tag or count "
              "mismatch between the two sides, or a peer that stopped driving progress");
    }
    FAULTLINE_RETURN_IF_ERROR(self.drive(std::min(left, std::chrono::milliseconds(50))));
  }
}

Status TaggedEngine::progress() { return impl_->drive(std::chrono::milliseconds(0)); }

SendPath TaggedEngine::path_of(RequestId send) const {
  auto found = impl_->requests.find(send);
  return found == impl_->requests.end() ? SendPath::kEager : found->second.path;
}

std::vector<size_t> TaggedEngine::received_lengths(RequestId receive) const {
  std::vector<size_t> lengths;
  auto found = impl_->requests.find(receive);
  if (found == impl_->requests.end()) return lengths;
  for (const auto& part : found->second.parts) lengths.push_back(part.length);
  return lengths;
}

size_t TaggedEngine::release(std::span<const RequestId> ids) {
  size_t pending = 0;
  for (RequestId id : ids) {
    auto found = impl_->requests.find(id);
    if (found == impl_->requests.end()) continue;
    if (!found->second.done) {
      ++pending;
      continue;
    }
    // A receive that failed early may still have buffers waiting: they wait no more.
    for (const auto& part : found->second.parts) {
      if (part.done) continue;
      impl_->tokens.erase(part.token);
      impl_->matcher.take(part.key);
    }
    impl_->requests.erase(found);
  }
  return pending;
}

const TaggedStats& TaggedEngine::stats() const { return impl_->stats; }
const std::vector<std::string>& TaggedEngine::events() const { return impl_->events; }

}  // namespace faultline::protocols::tagged
