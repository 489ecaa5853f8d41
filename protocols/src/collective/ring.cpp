#include "faultline/protocols/collective/ring.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <thread>

namespace faultline::protocols::collective {

namespace {

using transports::Completion;
using transports::Opcode;
using transports::Segment;

// The kinds of work a ring tracks.
constexpr uint32_t kChunkSend = 1;    // index: the chunk's number in its exchange
constexpr uint32_t kSlotReceive = 2;  // index: the receive slot

// Completions reaped earlier first, then the endpoint's.
Result<size_t> take(transports::Endpoint& endpoint, std::deque<Completion>& reaped,
                    std::span<Completion> out, std::chrono::milliseconds timeout) {
  if (reaped.empty()) return endpoint.poll(out, timeout);
  size_t n = 0;
  for (; n < out.size() && !reaped.empty(); ++n) {
    out[n] = std::move(reaped.front());
    reaped.pop_front();
  }
  return n;
}

// How a rank waits when a pass over both endpoints found nothing. Neither endpoint is ever
// waited on alone: a provider that progresses a send only while its sender polls (rxm's
// rendezvous on tcp) must not stall behind a wait on the receive side. With a core per rank it
// spins, reading the clock for the deadline every 1024 idle passes. With more ranks than cores
// it gives its core away after 8 idle passes (the rank it waits for may need that core to
// send); with enough cores yielding only hurts: the scheduler then tends to keep two yielding
// ranks on one core (an allreduce of 64 KiB over 2 ranks on shm took 80 us instead of 23).
class IdleBackoff {
 public:
  explicit IdleBackoff(bool yield) : yield_(yield) {}
  /// false once the deadline has passed.
  bool wait(std::chrono::steady_clock::time_point deadline) {
    ++idle_passes_;
    if (yield_ && idle_passes_ >= kSpinPasses) {
      sched_yield();
    } else if (idle_passes_ % kPassesPerClockRead != 0) {
      return true;
    }
    return std::chrono::steady_clock::now() <= deadline;
  }
  void progressed() { idle_passes_ = 0; }

 private:
  static constexpr unsigned kSpinPasses = 8;
  static constexpr unsigned kPassesPerClockRead = 1024;
  const bool yield_;
  unsigned idle_passes_ = 0;
};

}  // namespace

Ring::Ring(RingLink link, RingOptions options, transports::RegisteredBuffer send,
           ReceiveSlots slots)
    : link_(std::move(link)),
      options_(options),
      send_(std::move(send)),
      slots_(std::move(slots)),
      send_tracker_(link_.name, link.to_next),
      recv_tracker_(link_.name, link.from_prev),
      yields_when_idle_(options.yield_when_idle.value_or(
          link.size > std::max(1U, std::thread::hardware_concurrency()))) {}
Ring::~Ring() = default;

Result<std::unique_ptr<Ring>> Ring::create(RingLink link, RingOptions options) {
  if (options.chunk_bytes == 0 || options.max_recvs_in_flight == 0 ||
      options.max_sends_in_flight == 0 || link.size == 0 || link.rank >= link.size) {
    return Error{
        ErrorCode::kInvalidArgument,
        "ring: chunk_bytes, receives and sends in flight must be positive and rank < size"};
  }
  auto send = transports::RegisteredBuffer::allocate(link.device, options.capacity,
                                                     transports::kAccessLocalWrite);
  if (!send.ok()) return std::move(send).take_error();
  auto slots = ReceiveSlots::create(link.device, options.max_recvs_in_flight, options.chunk_bytes);
  if (!slots.ok()) return std::move(slots).take_error();
  if (link.name.empty()) link.name = "rank " + std::to_string(link.rank);
  return std::unique_ptr<Ring>(
      new Ring(std::move(link), options, std::move(send).value(), std::move(slots).value()));
}

Status Ring::check(const Completion& completion, const char* expected_op) {
  if (completion.ok()) return {};
  if (!options_.check_status) {
    stats_.ignored_errors.push_back(completion.describe());
    return {};
  }
  return Error{ErrorCode::kNativeError,
               name() + ": " + expected_op + " completion failed: " + completion.describe()};
}

// One exchange: `out` goes to the next rank in chunks while `in` fills from the previous (or,
// with `reduce`, each chunk is summed into `in` as it lands, without a copy). Never more receives
// in flight than chunks still expected; a chunk lands where the previous one ended, by the length
// it really had; every completion is checked by the trackers (its qp, that it was posted, that it
// comes once) and then by status.
class Ring::Exchange {
 public:
  Exchange(Ring& ring, std::span<const std::byte> out, std::span<std::byte> in,
           std::optional<DataType> reduce)
      : ring_(ring),
        out_(out),
        in_(in),
        reduce_(reduce ? std::optional<SumStream>(std::in_place, in, *reduce) : std::nullopt),
        chunk_(ring.options_.chunk_bytes),
        chunks_to_send_((out.size() + chunk_ - 1) / chunk_),
        chunks_expected_((in.size() + chunk_ - 1) / chunk_),
        deadline_(std::chrono::steady_clock::now() + ring.options_.timeout) {
    for (size_t j = ring.options_.max_recvs_in_flight; j > 0; --j) free_slots_.push_back(j - 1);
  }

  Status run() {
    // What an exchange that failed left outstanding is stale from now on.
    ring_.send_tracker_.abandon_outstanding();
    ring_.recv_tracker_.abandon_outstanding();
    if (!out_.empty()) std::memcpy(ring_.send_.data(), out_.data(), out_.size());
    FAULTLINE_RETURN_IF_ERROR(post_receives());
    IdleBackoff idle(ring_.yields_when_idle_);
    while (send_done_ < chunks_to_send_ || received_ < chunks_expected_) {
      FAULTLINE_RETURN_IF_ERROR(post_sends());
      const size_t before = send_done_ + received_;
      FAULTLINE_RETURN_IF_ERROR(reap_sends());
      FAULTLINE_RETURN_IF_ERROR(reap_receives());
      FAULTLINE_RETURN_IF_ERROR(post_receives());
      if (send_done_ + received_ != before) {
        idle.progressed();
      } else if (!idle.wait(deadline_)) {
        return timed_out();
      }
    }
    if (landed_ != in_.size() && ring_.options_.check_status) {
      return Error{ErrorCode::kProtocolViolation, who() + ": received " + std::to_string(landed_) +
                                                      " bytes in " + std::to_string(received_) +
                                                      " chunks, expected " +
                                                      std::to_string(in_.size())};
    }
    return {};
  }

 private:
  const std::string& who() const { return ring_.name(); }

  Status post_receives() {
    while (!free_slots_.empty() &&
           (posted_ < chunks_expected_ || ring_.options_.over_post_receives)) {
      const size_t slot = free_slots_.back();
      free_slots_.pop_back();
      FAULTLINE_RETURN_IF_ERROR(
          ring_.slots_.post(slot, ring_.link_.from_prev, ring_.recv_tracker_, kSlotReceive));
      ++posted_;
      if (posted_ > chunks_expected_) ++ring_.stats_.receives_beyond_expected;
      ring_.stats_.most_receives_in_flight =
          std::max(ring_.stats_.most_receives_in_flight, posted_ - received_);
    }
    return {};
  }

  Status post_sends() {
    while (sent_ < chunks_to_send_ && sent_ - send_done_ < ring_.options_.max_sends_in_flight) {
      const size_t offset = sent_ * chunk_;
      const Segment segment = ring_.send_.segment(offset, std::min(chunk_, out_.size() - offset));
      const uint64_t wr_id = ring_.send_tracker_.post({kChunkSend, sent_});
      Status posted = ring_.link_.to_next.post_send(
          {.wr_id = wr_id, .op = Opcode::kSend, .segments = {&segment, 1}});
      if (!posted.ok()) {
        ring_.send_tracker_.cancel(wr_id);
        return posted;
      }
      ++sent_;
      ++ring_.stats_.chunks_sent;
    }
    return {};
  }

  Status reap_sends() {
    auto sends =
        take(ring_.link_.to_next, ring_.reaped_sends_, completions_, std::chrono::milliseconds(0));
    if (!sends.ok()) return sends.error();
    for (size_t i = 0; i < sends.value(); ++i) {
      auto work = ring_.send_tracker_.complete(completions_[i]);
      if (!work.ok()) return work.error();
      FAULTLINE_RETURN_IF_ERROR(ring_.check(completions_[i], "SEND"));
      ++send_done_;
    }
    return {};
  }

  Status reap_receives() {
    auto receives = take(ring_.link_.from_prev, ring_.reaped_receives_, completions_,
                         std::chrono::milliseconds(0));
    if (!receives.ok()) return receives.error();
    for (size_t i = 0; i < receives.value(); ++i) {
      const Completion& c = completions_[i];
      auto work = ring_.recv_tracker_.complete(c);
      if (!work.ok()) return work.error();
      FAULTLINE_RETURN_IF_ERROR(ring_.check(c, "RECV"));
      const size_t slot = work.value().index;
      // The chunk lands where the previous one ended, by the length it really had.
      const size_t length = std::min<size_t>(c.byte_len, in_.size() - landed_);
      if (reduce_) {
        reduce_->add({ring_.slots_.slot(slot), length});
      } else if (length > 0) {
        std::memcpy(in_.data() + landed_, ring_.slots_.slot(slot), length);
      }
      landed_ += length;
      ++received_;
      ++ring_.stats_.chunks_received;
      free_slots_.push_back(slot);
    }
    return {};
  }

  Error timed_out() const {
    return Error{ErrorCode::kTimeout, who() + ": exchange incomplete after " +
                                          std::to_string(ring_.options_.timeout.count()) +
                                          " ms: sent " + std::to_string(send_done_) + "/" +
                                          std::to_string(chunks_to_send_) + " chunks, received " +
                                          std::to_string(received_) + "/" +
                                          std::to_string(chunks_expected_)};
  }

  Ring& ring_;
  std::span<const std::byte> out_;
  std::span<std::byte> in_;
  std::optional<SumStream> reduce_;
  const size_t chunk_;
  const size_t chunks_to_send_;
  const size_t chunks_expected_;
  const std::chrono::steady_clock::time_point deadline_;
  size_t sent_ = 0;       // posted sends
  size_t send_done_ = 0;  // completed sends
  size_t posted_ = 0;     // posted receives
  size_t received_ = 0;   // completed receives
  size_t landed_ = 0;     // bytes of `in` filled
  std::vector<size_t> free_slots_;
  Completion completions_[8];
};

Status Ring::exchange(std::span<const std::byte> out, std::span<std::byte> in) {
  return run_exchange(out, in, std::nullopt);
}

Status Ring::exchange_reduce(std::span<const std::byte> out, std::span<std::byte> in,
                             DataType type) {
  return run_exchange(out, in, type);
}

Status Ring::run_exchange(std::span<const std::byte> out, std::span<std::byte> in,
                          std::optional<DataType> reduce) {
  if (out.size() > options_.capacity) {
    return Error{ErrorCode::kLimitExceeded, "ring exchange of " + std::to_string(out.size()) +
                                                " bytes exceeds the capacity " +
                                                std::to_string(options_.capacity)};
  }
  return Exchange(*this, out, in, reduce).run();
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
  for (size_t step = 0; step + 1 < n; ++step) {
    // Send segment rank-step-1, receive and reduce segment rank-step-2: after n-1 steps this
    // rank's own segment holds the sum. The two never overlap: each chunk is summed in place
    // as it lands.
    const auto [send_begin, send_end] =
        segment(data.size(), type, (link_.rank + 2 * n - step - 1) % n);
    const auto [recv_begin, recv_end] =
        segment(data.size(), type, (link_.rank + 2 * n - step - 2) % n);
    FAULTLINE_RETURN_IF_ERROR(run_exchange(data.subspan(send_begin, send_end - send_begin),
                                           data.subspan(recv_begin, recv_end - recv_begin), type));
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
