#include "faultline/protocols/completion_tracker.hpp"

#include <atomic>

namespace faultline::protocols {

namespace {

constexpr unsigned kSequenceBits = 40;
constexpr uint64_t kSequenceMask = (uint64_t{1} << kSequenceBits) - 1;
constexpr uint64_t kGenerations = uint64_t{1} << (64 - kSequenceBits);

// Starts at 1: a wr_id of 0 (a completion that carries none) is never one of ours.
std::atomic<uint64_t> next_generation{1};

uint64_t new_generation() {
  const uint64_t generation = next_generation.fetch_add(1) % kGenerations;
  return generation == 0 ? next_generation.fetch_add(1) % kGenerations : generation;
}

}  // namespace

CompletionTracker::CompletionTracker(std::string who, const transports::Endpoint& endpoint)
    : who_(std::move(who)), endpoint_(endpoint), generation_(new_generation()) {}

uint64_t CompletionTracker::post(Work work) {
  const uint64_t wr_id = (generation_ << kSequenceBits) | (next_sequence_++ & kSequenceMask);
  outstanding_.emplace(wr_id, work);
  return wr_id;
}

void CompletionTracker::cancel(uint64_t wr_id) { outstanding_.erase(wr_id); }

bool CompletionTracker::owns(uint64_t wr_id) const {
  return (wr_id >> kSequenceBits) == generation_;
}

Error CompletionTracker::violation(const transports::Completion& completion,
                                   const std::string& why) const {
  return Error{ErrorCode::kProtocolViolation, who_ + ": " + why + ": " + completion.describe()};
}

Result<CompletionTracker::Work> CompletionTracker::complete(
    const transports::Completion& completion) {
  if (completion.qp_num != endpoint_.qp_num()) {
    return violation(completion, "a completion of qp " + std::to_string(completion.qp_num) +
                                     ", not this endpoint's qp " +
                                     std::to_string(endpoint_.qp_num()) +
                                     ": left over from before a reconnect");
  }
  if (!owns(completion.wr_id)) {
    return violation(completion,
                     "a completion for a work request this engine never posted (another "
                     "generation's: left over from before a reconnect, on a reused qp number)");
  }
  auto found = outstanding_.find(completion.wr_id);
  if (found == outstanding_.end()) {
    const bool issued = (completion.wr_id & kSequenceMask) < next_sequence_;
    return violation(completion, issued
                                     ? "a stale or duplicate completion for a work request already "
                                       "completed (or given up on)"
                                     : "a completion for a work request this engine never posted");
  }
  const Work work = found->second;
  outstanding_.erase(found);
  return work;
}

}  // namespace faultline::protocols
