#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "faultline/protocols/collective/ring.hpp"

namespace faultline::protocols::collective {

/// The ranks `rank` of `size` exchanges with in a recursive-doubling allreduce, in the order
/// it meets them. With `core` the largest power of two <= size: a rank at or past `core`
/// only hands its data to rank - core and takes the sum back; a rank below it first takes
/// rank + core's data (when there is such a rank), then pairs with rank ^ 1, rank ^ 2, ...
/// rank ^ (core / 2).
std::vector<size_t> doubling_partners(size_t rank, size_t size);

/// One partner of a rank: an endpoint connected to the partner's `from_peer` for this rank,
/// and one connected to the partner's `to_peer`, both made from the rank's device.
struct PartnerLink {
  size_t rank = 0;
  transports::Endpoint& to_peer;
  transports::Endpoint& from_peer;
};

/// A rank's place in recursive doubling: one PartnerLink for each of
/// `doubling_partners(rank, size)`, in that order.
struct DoublingLink {
  transports::Device& device;
  std::vector<PartnerLink> partners;
  size_t rank = 0;
  size_t size = 1;
};

/// What each of a core rank's steps exchanges with its partner.
enum class DoublingExchange {
  /// The whole message, summed on both sides (recursive doubling): log2(size) steps of all of
  /// it; for small messages.
  kWholeMessage,
  /// Halving-doubling (Rabenseifner's): a reduce-scatter whose every step hands the partner
  /// half of the rank's current window and sums the other half, then an allgather that
  /// retraces the steps, each exchanging the rank's whole window. 2 log2(size) steps moving
  /// 2 (size - 1) / size of the message, as the ring's 2 (size - 1) steps do.
  kHalving,
};

/// Allreduce by recursive doubling: log2(size) steps, each exchanging the whole buffer with
/// one partner and summing what arrives, against the ring's 2 (size - 1) steps of a
/// size-th of it; for small messages, where the steps' latency dominates. A size that is not
/// a power of two costs two steps more (the extra ranks' data in, the sum back out). Each
/// partner is a ring of two, so every chunk is received, bounded, checked and summed as the
/// ring's are, and every completion's status is checked (`RingOptions::check_status`).
/// Every rank ends with the same bits: each step sums the same two values on both sides.
/// Not thread-safe: one thread per rank.
class RecursiveDoubling {
 public:
  static Result<std::unique_ptr<RecursiveDoubling>> create(
      DoublingLink link, RingOptions options,
      DoublingExchange exchange = DoublingExchange::kWholeMessage);
  ~RecursiveDoubling();
  RecursiveDoubling(const RecursiveDoubling&) = delete;
  RecursiveDoubling& operator=(const RecursiveDoubling&) = delete;

  /// Sum over all ranks, in place.
  Status allreduce(std::span<std::byte> data, DataType type);
  /// Reaps every partner's endpoints without blocking (as `Ring::drive`).
  Status drive();
  /// Over all partners: counts summed, the most receives in flight of any one.
  RingStats stats() const;

 private:
  RecursiveDoubling(size_t rank, size_t size, DoublingExchange exchange,
                    std::vector<std::unique_ptr<Ring>> pairs);
  /// The core ranks' steps with the pairs past the extra rank's (`first`).
  Status whole_message(std::span<std::byte> data, DataType type, size_t first);
  Status halving(std::span<std::byte> data, DataType type, size_t first);

  size_t rank_;
  size_t size_;
  DoublingExchange exchange_;
  std::vector<std::unique_ptr<Ring>> pairs_;  // one per partner, in doubling_partners' order
};

}  // namespace faultline::protocols::collective
