#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "faultline/protocols/kv/segment_contract.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::protocols::kv {

/// A change the sending side makes to its own messages, so a scenario can show what the
/// receiving side does with a message that breaks the contract (the StepMesh bugs).
struct Mutation {
  enum class Kind { kDropSegment, kAddSegment, kReorderSegments, kCorruptHeader };
  Kind kind = Kind::kDropSegment;
  MessageType message = MessageType::kPushRequest;
  std::string
      target;  ///< the segment to drop ("lens"), or the header field ("magic", "segment_count")
};

struct RendezvousOptions {
  std::string side;               ///< "worker" or "server": who noticed, in violations
  size_t arena_bytes = 8u << 20;  ///< registered; half for sending, half for receiving
  std::chrono::milliseconds timeout{10000};
  std::vector<Mutation> mutations;  ///< applied to this side's outgoing messages
};

/// A received message: its type and the bytes of each segment.
struct Message {
  MessageType type = MessageType::kPushResponse;
  std::vector<std::vector<std::byte>> segments;
};

/// One side of the kv rendezvous over a connected endpoint. Sending: announce the message
/// (type, segment count, lengths), wait for the receiver's grant (addresses and keys) or its
/// rejection, RDMA-write the segments, signal with write-with-immediate. Receiving: check the
/// announce against the segment contract, reject it with the violation or grant buffers, wait
/// for the data. Every completion's status is checked; one that is not SUCCESS is an error
/// naming it (qp, wr_id, status, native code). Not thread-safe; one message at a time.
class Rendezvous {
 public:
  /// Registers the arena and the control slots and posts the control receives.
  static Result<std::unique_ptr<Rendezvous>> create(transports::Device& device,
                                                    transports::Endpoint& endpoint,
                                                    RendezvousOptions options);
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  /// Sends one message. A rejection by the receiver is a kProtocolViolation error carrying
  /// the receiver's violation.
  Status send(MessageType type, std::vector<std::span<const std::byte>> segments);
  /// Receives one message. A message that breaks the contract is rejected (the sender learns
  /// why) and returned as a kProtocolViolation error; the rendezvous stays usable.
  Result<Message> receive();

  /// What this side saw, in order: messages sent and received, violations, mutations applied.
  const std::vector<std::string>& events() const;
  /// Replaces the mutations applied to this side's outgoing messages.
  void set_mutations(std::vector<Mutation> mutations);

 private:
  struct Impl;
  explicit Rendezvous(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultline::protocols::kv
