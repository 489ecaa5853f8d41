#include "faultline/protocols/collective/ring.hpp"

#include <algorithm>
#include <cstring>

#include "faultline/transports/memory_provider.hpp"

namespace faultline::protocols::collective {

namespace {

using transports::Completion;
using transports::Error;
using transports::ErrorCode;
using transports::Opcode;
using transports::Segment;
using transports::Status;

// wr_id of chunk i sent in exchange g: kSend | g << 24 | i; of receive slot j: kRecv | g << 24 | j.
// The exchange number (mod 256) tells a late completion of an earlier exchange from a current one.
constexpr uint64_t kSend = 1ULL << 32;
constexpr uint64_t kRecv = 2ULL << 32;
constexpr uint64_t kIndexMask = (1ULL << 24) - 1;

// Completions reaped earlier first, then the endpoint's.
transports::Result<size_t> take(transports::Endpoint& endpoint, std::deque<Completion>& reaped,
                                std::span<Completion> out, std::chrono::milliseconds timeout) {
  if (reaped.empty()) return endpoint.poll(out, timeout);
  size_t n = 0;
  for (; n < out.size() && !reaped.empty(); ++n) {
    out[n] = std::move(reaped.front());
    reaped.pop_front();
  }
  return n;
}

}  // namespace

struct Ring::Buffers {
  std::shared_ptr<std::byte[]> send;
  std::unique_ptr<transports::MemoryRegion> send_region;
  std::shared_ptr<std::byte[]> slots;  // max_recvs_in_flight slots of chunk_bytes
  std::unique_ptr<transports::MemoryRegion> slots_region;
};

Ring::Ring(RingLink link, RingOptions options, std::unique_ptr<Buffers> buffers)
    : link_(link), options_(options), buffers_(std::move(buffers)) {}
Ring::~Ring() = default;

transports::Result<std::unique_ptr<Ring>> Ring::create(RingLink link, RingOptions options) {
  if (options.chunk_bytes == 0 || options.max_recvs_in_flight == 0 ||
      options.max_sends_in_flight == 0 || link.size == 0 || link.rank >= link.size) {
    return Error{
        ErrorCode::kInvalidArgument,
        "ring: chunk_bytes, receives and sends in flight must be positive and rank < size"};
  }
  auto buffers = std::make_unique<Buffers>();
  transports::HostMemoryProvider host;
  auto send = host.allocate(options.capacity, 4096);
  if (!send.ok()) return std::move(send).take_error();
  buffers->send = send.value();
  auto send_region = link.device.register_memory(buffers->send.get(), options.capacity,
                                                 transports::kAccessLocalWrite);
  if (!send_region.ok()) return std::move(send_region).take_error();
  buffers->send_region = std::move(send_region).value();
  const size_t slot_bytes = options.chunk_bytes * options.max_recvs_in_flight;
  auto slots = host.allocate(slot_bytes, 4096);
  if (!slots.ok()) return std::move(slots).take_error();
  buffers->slots = slots.value();
  auto slots_region =
      link.device.register_memory(buffers->slots.get(), slot_bytes, transports::kAccessLocalWrite);
  if (!slots_region.ok()) return std::move(slots_region).take_error();
  buffers->slots_region = std::move(slots_region).value();
  return std::unique_ptr<Ring>(new Ring(link, options, std::move(buffers)));
}

Status Ring::check(const Completion& completion, const char* expected_op) {
  if (completion.ok()) return {};
  if (!options_.check_status) {
    stats_.ignored_errors.push_back(completion.describe());
    return {};
  }
  return Error{ErrorCode::kNativeError, "rank " + std::to_string(link_.rank) + ": " + expected_op +
                                            " completion failed: " + completion.describe()};
}

Status Ring::exchange(std::span<const std::byte> out, std::span<std::byte> in) {
  if (out.size() > options_.capacity ||
      (out.size() + options_.chunk_bytes - 1) / options_.chunk_bytes > kIndexMask) {
    return Error{ErrorCode::kLimitExceeded, "ring exchange of " + std::to_string(out.size()) +
                                                " bytes exceeds the capacity " +
                                                std::to_string(options_.capacity)};
  }
  const size_t chunk = options_.chunk_bytes;
  const uint64_t generation = (static_cast<uint64_t>(exchanges_++) & 0xffU) << 24;
  const uint64_t send_base = kSend | generation;
  const uint64_t recv_base = kRecv | generation;
  const size_t chunks_to_send = (out.size() + chunk - 1) / chunk;
  const size_t chunks_expected = (in.size() + chunk - 1) / chunk;
  if (!out.empty()) std::memcpy(buffers_->send.get(), out.data(), out.size());

  size_t sent = 0;       // posted sends
  size_t send_done = 0;  // completed sends
  size_t posted = 0;     // posted receives
  size_t received = 0;   // completed receives
  size_t landed = 0;     // bytes of `in` filled
  std::vector<size_t> free_slots;
  for (size_t j = options_.max_recvs_in_flight; j > 0; --j) free_slots.push_back(j - 1);
  // A completion is taken once: a second one for the same work request (a duplicate, or a
  // stale one replayed after a reconnect) is flagged, never counted.
  std::vector<bool> send_completed(chunks_to_send, false);
  std::vector<bool> slot_posted(options_.max_recvs_in_flight, false);
  auto stale = [&](const Completion& c) {
    return Error{ErrorCode::kProtocolViolation,
                 "rank " + std::to_string(link_.rank) +
                     ": stale or duplicate completion for a work request already completed: " +
                     c.describe()};
  };

  // Work request ids start over with every ring, so a completion left from an endpoint that
  // existed before a reconnect can carry an id this exchange uses: its qp gives it away.
  auto foreign = [&](const Completion& c, const transports::Endpoint& endpoint) {
    return Error{ErrorCode::kProtocolViolation,
                 "rank " + std::to_string(link_.rank) + ": completion of qp " +
                     std::to_string(c.qp_num) + ", not this ring's qp " +
                     std::to_string(endpoint.qp_num()) +
                     ": left over from before a reconnect: " + c.describe()};
  };

  auto post_receives = [&]() -> Status {
    // Never more receives in flight than chunks still expected.
    while (!free_slots.empty() && posted < chunks_expected) {
      const size_t slot = free_slots.back();
      free_slots.pop_back();
      Segment segment{buffers_->slots.get() + slot * chunk, static_cast<uint32_t>(chunk),
                      buffers_->slots_region.get()};
      FAULTLINE_RETURN_IF_ERROR(link_.from_prev.post_recv({recv_base + slot, {&segment, 1}}));
      slot_posted[slot] = true;
      ++posted;
      stats_.most_receives_in_flight = std::max(stats_.most_receives_in_flight, posted - received);
    }
    return {};
  };
  auto post_sends = [&]() -> Status {
    while (sent < chunks_to_send && sent - send_done < options_.max_sends_in_flight) {
      const size_t offset = sent * chunk;
      const size_t length = std::min(chunk, out.size() - offset);
      Segment segment{buffers_->send.get() + offset, static_cast<uint32_t>(length),
                      buffers_->send_region.get()};
      FAULTLINE_RETURN_IF_ERROR(link_.to_next.post_send(
          {.wr_id = send_base + sent, .op = Opcode::kSend, .segments = {&segment, 1}}));
      ++sent;
      ++stats_.chunks_sent;
    }
    return {};
  };

  FAULTLINE_RETURN_IF_ERROR(post_receives());
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  while (send_done < chunks_to_send || received < chunks_expected) {
    FAULTLINE_RETURN_IF_ERROR(post_sends());
    if (std::chrono::steady_clock::now() > deadline) {
      return Error{ErrorCode::kTimeout,
                   "rank " + std::to_string(link_.rank) + ": exchange incomplete after " +
                       std::to_string(options_.timeout.count()) + " ms: sent " +
                       std::to_string(send_done) + "/" + std::to_string(chunks_to_send) +
                       " chunks, received " + std::to_string(received) + "/" +
                       std::to_string(chunks_expected)};
    }
    Completion completions[8];
    auto sends = take(link_.to_next, reaped_sends_, completions, std::chrono::milliseconds(0));
    if (!sends.ok()) return sends.error();
    for (size_t i = 0; i < sends.value(); ++i) {
      const Completion& c = completions[i];
      if (c.qp_num != link_.to_next.qp_num()) return foreign(c, link_.to_next);
      if (c.wr_id < send_base || c.wr_id >= send_base + sent) {
        return Error{
            ErrorCode::kProtocolViolation,
            "rank " + std::to_string(link_.rank) +
                ": completion for a wr_id not posted in this exchange (stale?): " + c.describe()};
      }
      if (send_completed[c.wr_id - send_base]) return stale(c);
      send_completed[c.wr_id - send_base] = true;
      FAULTLINE_RETURN_IF_ERROR(check(c, "SEND"));
      ++send_done;
    }
    auto receives =
        take(link_.from_prev, reaped_receives_, completions, std::chrono::milliseconds(1));
    if (!receives.ok()) return receives.error();
    for (size_t i = 0; i < receives.value(); ++i) {
      const Completion& c = completions[i];
      if (c.qp_num != link_.from_prev.qp_num()) return foreign(c, link_.from_prev);
      if (c.wr_id < recv_base || c.wr_id >= recv_base + options_.max_recvs_in_flight) {
        return Error{
            ErrorCode::kProtocolViolation,
            "rank " + std::to_string(link_.rank) +
                ": completion for a wr_id not posted in this exchange (stale?): " + c.describe()};
      }
      const size_t slot = c.wr_id - recv_base;
      if (!slot_posted[slot]) return stale(c);
      slot_posted[slot] = false;
      FAULTLINE_RETURN_IF_ERROR(check(c, "RECV"));
      // The chunk lands where the previous one ended, by the length it really had.
      const size_t length = std::min<size_t>(c.byte_len, in.size() - landed);
      std::memcpy(in.data() + landed, buffers_->slots.get() + slot * chunk, length);
      landed += length;
      ++received;
      ++stats_.chunks_received;
      free_slots.push_back(slot);
    }
    FAULTLINE_RETURN_IF_ERROR(post_receives());
  }
  if (landed != in.size() && options_.check_status) {
    return Error{ErrorCode::kProtocolViolation,
                 "rank " + std::to_string(link_.rank) + ": received " + std::to_string(landed) +
                     " bytes in " + std::to_string(received) + " chunks, expected " +
                     std::to_string(in.size())};
  }
  return {};
}

Status Ring::drive() {
  Completion completions[8];
  for (auto [endpoint, reaped] : {std::pair{&link_.to_next, &reaped_sends_},
                                  std::pair{&link_.from_prev, &reaped_receives_}}) {
    auto polled = endpoint->poll(completions, std::chrono::milliseconds(0));
    if (!polled.ok()) return polled.error();
    reaped->insert(reaped->end(), completions, completions + polled.value());
  }
  return {};
}

std::pair<size_t, size_t> Ring::segment(size_t bytes, DataType type, size_t index) const {
  return ring_segment(bytes, type, link_.size, index);
}

Status Ring::reduce_scatter(std::span<std::byte> data, DataType type) {
  const size_t n = link_.size;
  std::vector<std::byte> incoming;
  for (size_t step = 0; step + 1 < n; ++step) {
    // Send segment rank-step-1, receive and reduce segment rank-step-2: after n-1 steps this
    // rank's own segment holds the sum.
    const auto [send_begin, send_end] =
        segment(data.size(), type, (link_.rank + 2 * n - step - 1) % n);
    const auto [recv_begin, recv_end] =
        segment(data.size(), type, (link_.rank + 2 * n - step - 2) % n);
    incoming.resize(recv_end - recv_begin);
    FAULTLINE_RETURN_IF_ERROR(exchange(data.subspan(send_begin, send_end - send_begin), incoming));
    sum_into(data.subspan(recv_begin, recv_end - recv_begin), incoming, type);
  }
  return {};
}

Status Ring::allgather(std::span<std::byte> data, DataType type) {
  const size_t n = link_.size;
  for (size_t step = 0; step + 1 < n; ++step) {
    const auto [send_begin, send_end] = segment(data.size(), type, (link_.rank + n - step) % n);
    const auto [recv_begin, recv_end] =
        segment(data.size(), type, (link_.rank + 2 * n - step - 1) % n);
    FAULTLINE_RETURN_IF_ERROR(exchange(data.subspan(send_begin, send_end - send_begin),
                                       data.subspan(recv_begin, recv_end - recv_begin)));
  }
  return {};
}

Status Ring::allreduce(std::span<std::byte> data, DataType type) {
  FAULTLINE_RETURN_IF_ERROR(reduce_scatter(data, type));
  return allgather(data, type);
}

Status Ring::broadcast(std::span<std::byte> data, size_t root) {
  const size_t n = link_.size;
  if (n == 1) return {};
  const bool receives = link_.rank != root;
  const bool forwards = (link_.rank + 1) % n != root;
  if (receives) FAULTLINE_RETURN_IF_ERROR(exchange({}, data));
  if (forwards) FAULTLINE_RETURN_IF_ERROR(exchange(data, {}));
  return {};
}

}  // namespace faultline::protocols::collective
