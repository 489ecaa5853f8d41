#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "faultline/transports/transport.hpp"

namespace faultline::protocols {

/// The work requests one engine posted on one endpoint, and the judgement of every completion
/// that comes back, shared by every engine so that each flags the same three things with the
/// same text: a completion of another qp, one of a work request this engine never posted (or
/// posted before a reconnect), and a second completion of a request already completed.
///
/// A work-request id is the tracker's generation (bits 40-63: a process-wide number per
/// tracker, so an engine made after a reconnect never shares an id with the old one, even on
/// a reused qp number) and a sequence number (bits 0-39: every post gets a new one, so a slot
/// posted again is told apart from its earlier post). Not thread-safe, like the endpoints.
class CompletionTracker {
 public:
  /// What a posted work request is for: a kind the engine defines, and an index (a slot, a
  /// chunk, a request).
  struct Work {
    uint32_t kind = 0;
    uint64_t index = 0;
  };

  /// `who` starts every error text ("rank 1", "worker"); `endpoint` is the one posted on.
  CompletionTracker(std::string who, const transports::Endpoint& endpoint);

  /// The wr_id to post `work` with; it is outstanding from now on.
  uint64_t post(Work work);
  /// The post with `wr_id` failed: it is no longer outstanding.
  void cancel(uint64_t wr_id);
  /// What `completion` completes (no longer outstanding), or a kProtocolViolation naming why
  /// it is none of this tracker's. The completion's status is the caller's to judge.
  Result<Work> complete(const transports::Completion& completion);
  /// True when `wr_id` carries this tracker's generation.
  bool owns(uint64_t wr_id) const;
  /// Gives up on every outstanding request (an exchange that failed or timed out): their late
  /// completions are then refused as stale.
  void abandon_outstanding() { outstanding_.clear(); }
  size_t outstanding() const { return outstanding_.size(); }

 private:
  Error violation(const transports::Completion& completion, const std::string& why) const;

  std::string who_;
  const transports::Endpoint& endpoint_;
  uint64_t generation_;
  uint64_t next_sequence_ = 1;
  std::unordered_map<uint64_t, Work> outstanding_;
};

}  // namespace faultline::protocols
