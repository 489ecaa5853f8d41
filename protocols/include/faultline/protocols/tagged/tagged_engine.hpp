#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "faultline/transports/transport.hpp"

namespace faultline::protocols::tagged {

struct TaggedOptions {
  std::string side;  ///< "sender", "receiver", ...: named in errors and events
  /// Payloads up to this many bytes go eagerly: sent before the receive is posted, into one of
  /// the peer's receive slots; larger ones wait for the receiver's buffer and go by RDMA write.
  size_t eager_threshold = 8184;
  /// Eager messages accepted while the peer has no free slot; a send beyond it backs off.
  size_t eager_queue_depth = 8;
  /// Receive slots each side posts (both sides must agree): the peer's credits.
  size_t receive_slots = 32;
  std::chrono::milliseconds timeout{10000};
  /// A mutation (aws-ofi-nccl's off-by-header): receive slots sized to the eager threshold with
  /// no room for the frame header, so the largest eager messages overflow the slot they land
  /// in. For scenarios that show the boundary; both sides' sends are unchanged.
  bool slot_without_header = false;
};

/// One buffer of a (grouped) receive and the tag it takes.
struct TaggedBuffer {
  uint64_t tag = 0;
  std::span<std::byte> buffer;
};

enum class SendPath { kEager, kRendezvous };

/// What the engine did, for scenario evidence and for tests of its bounds.
struct TaggedStats {
  uint64_t eager_sent = 0;
  uint64_t rendezvous_sent = 0;
  uint64_t eager_received = 0;
  uint64_t rendezvous_received = 0;
  uint64_t unexpected = 0;  ///< eager messages that arrived before their receive
  uint64_t backoffs = 0;    ///< sends that found the eager queue full and waited
  size_t eager_queue_high_water = 0;
  uint64_t credit_frames = 0;  ///< frames sent only to return credits
};

/// Tagged messaging over one connected endpoint, both directions. Sends of at most the eager
/// threshold are copied into a frame and sent at once (queued while the peer has no free slot,
/// in a bounded queue); larger ones wait for the receiver's buffer (address and key, sent when
/// the receive is posted) and are RDMA-written with immediate data. A receive takes up to 8
/// buffers, each matched by tag; the k-th message of a tag goes to the k-th receive of that
/// tag, whatever order the frames arrive in. Every completion's status is checked; a failure
/// breaks the engine and every later call reports it (qp, wr_id, status). Not thread-safe.
class TaggedEngine {
 public:
  using RequestId = uint64_t;

  /// Registers the slots and posts the receives. The endpoint must be connected, with a
  /// receive depth of at least `receive_slots`.
  static Result<std::unique_ptr<TaggedEngine>> create(transports::Device& device,
                                                      transports::Endpoint& endpoint,
                                                      TaggedOptions options);
  ~TaggedEngine();
  TaggedEngine(const TaggedEngine&) = delete;
  TaggedEngine& operator=(const TaggedEngine&) = delete;

  /// Starts a send. An eager payload is copied, so `data` may be reused at once; a rendezvous
  /// payload must stay valid until the request is done. When the eager queue is full, backs
  /// off (drives progress) until there is room, and fails after the timeout.
  Result<RequestId> send(uint64_t tag, std::span<const std::byte> data);
  /// Posts a receive of 1 to 8 buffers; it is done when every buffer has its message.
  Result<RequestId> receive(std::vector<TaggedBuffer> group);

  /// Drives progress until every request is done; the first failure among them, or a timeout
  /// naming what is still pending.
  Status wait(std::span<const RequestId> requests);
  /// One round of progress without blocking: reaps completions, transmits what now fits.
  Status progress();

  SendPath path_of(RequestId send) const;
  /// The bytes each buffer of a finished receive got.
  std::vector<size_t> received_lengths(RequestId receive) const;
  /// Forgets finished requests (a failed receive's buffers that still wait stop waiting).
  /// Returns how many were not finished: the engine still holds those, and the memory they
  /// name (receive buffers, rendezvous payloads) must stay valid as long as the engine does.
  size_t release(std::span<const RequestId> requests);

  const TaggedStats& stats() const;
  const std::vector<std::string>& events() const;

 private:
  struct Impl;
  explicit TaggedEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultline::protocols::tagged
