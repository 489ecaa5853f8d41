#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "faultline/protocols/collective/reduction.hpp"
#include "faultline/protocols/completion_tracker.hpp"
#include "faultline/protocols/receive_slots.hpp"
#include "faultline/transports/registered_buffer.hpp"

namespace faultline::protocols::collective {

/// A rank's place in a ring: an endpoint connected to the next rank's `from_prev`, and one
/// connected to the previous rank's `to_next`, both made from `device`.
struct RingLink {
  transports::Device& device;
  transports::Endpoint& to_next;
  transports::Endpoint& from_prev;
  size_t rank = 0;
  size_t size = 1;
  /// How the ring's errors name this rank; empty: "rank N". Recursive doubling's pairs are
  /// rings of two, named by the ranks of the whole collective ("rank 5 with rank 4").
  std::string name;
};

struct RingOptions {
  size_t chunk_bytes = size_t{64} * 1024;
  size_t max_recvs_in_flight = 8;
  size_t max_sends_in_flight = 8;
  size_t capacity = 16u << 20;  ///< the most one exchange moves each way (registered twice)
  std::chrono::milliseconds timeout{20000};
  /// false only to reproduce the unchecked-status class of bug (MLX JACCL): a failed
  /// completion is then taken as success, and the data check has to catch the corruption.
  bool check_status = true;
  /// A mutation (RMLX PR #87): every free receive slot stays posted whatever the chunks an
  /// exchange still expects, so receives are left over for the next exchange (phantom
  /// receives). For scenarios that show the bound being asserted.
  bool over_post_receives = false;
  /// Whether a rank that finds nothing to do gives its core away (sched_yield) after a short
  /// spin. Unset: when the ring has more ranks than this host has cores, as if they all ran
  /// here (Open MPI's mpi_yield_when_idle, which it sets when oversubscribed).
  std::optional<bool> yield_when_idle;
};

/// What the ring saw: for the report, and for tests of its bounds.
struct RingStats {
  uint64_t chunks_sent = 0;
  uint64_t chunks_received = 0;
  size_t most_receives_in_flight = 0;
  /// Receives posted past the chunks their exchange expected (only the mutation posts them).
  uint64_t receives_beyond_expected = 0;
  std::vector<std::string> ignored_errors;  ///< completions that failed with check_status off
};

/// Ring collectives over any transport: chunked point-to-point exchange with the neighbours,
/// and on it reduce-scatter, allgather, allreduce (reduce-scatter then allgather) and
/// broadcast. Receives in flight never exceed the chunks still expected; a chunk lands where
/// the previous one ended, by the length it really had; every completion's status is checked
/// and a failure names qp, wr_id and status; a completion for a wr_id never posted is an
/// error. Not thread-safe: one thread per rank.
class Ring {
 public:
  static Result<std::unique_ptr<Ring>> create(RingLink link, RingOptions options);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  /// Sends `out` to the next rank while receiving exactly `in.size()` bytes from the previous.
  Status exchange(std::span<const std::byte> out, std::span<std::byte> in);
  /// `exchange`, but each chunk received is summed into `in` (as `type`) where it lands.
  /// `out` may be `in`: what is sent is staged before anything is received.
  Status exchange_reduce(std::span<const std::byte> out, std::span<std::byte> in, DataType type);
  /// Sum over all ranks, in place.
  Status allreduce(std::span<std::byte> data, DataType type);
  /// Afterwards this rank's own segment (`segment(rank)`) of `data` holds the sum.
  Status reduce_scatter(std::span<std::byte> data, DataType type);
  /// Each rank contributes its own segment of `data`; afterwards every rank has all of them.
  Status allgather(std::span<std::byte> data, DataType type);
  /// `root`'s `data` to every rank.
  Status broadcast(std::span<std::byte> data, size_t root);

  /// The byte range of segment `index` when `bytes` of `type` are split over the ring: whole
  /// elements, the first `elements % size` segments one element longer.
  std::pair<size_t, size_t> segment(size_t bytes, DataType type, size_t index) const;
  const RingStats& stats() const { return stats_; }

  /// Reaps both endpoints without blocking, for a rank waiting on something else (its peers,
  /// the harness), so that the neighbours' transfers still complete. What it reaps is kept and
  /// judged by the next exchange like any completion: nothing is thrown away unseen.
  Status drive();

 private:
  class Exchange;
  Ring(RingLink link, RingOptions options, transports::RegisteredBuffer send, ReceiveSlots slots);
  Status check(const transports::Completion& completion, const char* expected_op);
  const std::string& name() const { return link_.name; }
  /// `exchange`, or with `reduce` each chunk received is summed into `in` instead of copied.
  Status run_exchange(std::span<const std::byte> out, std::span<std::byte> in,
                      std::optional<DataType> reduce);

  RingLink link_;
  RingOptions options_;
  transports::RegisteredBuffer send_;  // what `exchange` sends is staged here
  ReceiveSlots slots_;                 // max_recvs_in_flight slots of chunk_bytes
  CompletionTracker send_tracker_;     // on to_next
  CompletionTracker recv_tracker_;     // on from_prev
  RingStats stats_;
  bool yields_when_idle_ = false;                    // options_.yield_when_idle, decided
  std::deque<transports::Completion> reaped_sends_;  // by drive(), for the next exchange
  std::deque<transports::Completion> reaped_receives_;
};

}  // namespace faultline::protocols::collective
