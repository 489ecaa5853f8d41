#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "faultline/protocols/tagged/tag_matcher.hpp"

namespace faultline::protocols::tagged {

/// Credits for the peer's receive slots. Every frame and every write-with-immediate takes one
/// slot on the other side; the peer gives slots back as it reposts them, in the header of its
/// next frame. The last credit is kept for a frame that only returns credits, so two sides
/// that have used up each other's slots can always unblock each other.
class CreditWindow {
 public:
  /// `peer_slots`: receive slots the peer posted; `own_slots`: the ones this side posted.
  CreditWindow(size_t peer_slots, size_t own_slots);

  /// Room for a frame that carries data or a request (one credit is kept back).
  bool can_send() const { return credits_ >= 2; }
  /// Room for a frame that only returns credits.
  bool can_return() const { return credits_ >= 1; }
  void consume();
  /// The peer reposted `count` slots this side had used.
  void returned(size_t count) { credits_ += count; }

  /// One of this side's slots was reposted; the peer hears of it with the next frame.
  void reposted() { ++to_return_; }
  /// What the next outgoing frame tells the peer; counted as told.
  uint16_t take_returns();
  /// Enough reposted slots have piled up that a frame of their own is worth sending.
  bool return_due() const { return to_return_ > 0 && to_return_ * 2 >= own_slots_; }

  size_t credits() const { return credits_; }

 private:
  size_t credits_;
  size_t own_slots_;
  size_t to_return_ = 0;
};

/// One eager message a sender accepted and has not yet transmitted.
struct QueuedEager {
  uint64_t request = 0;
  TagKey key;
  std::vector<std::byte> payload;
};

/// The sender's eager queue: messages wait here, copied, while the peer has no slot for them.
/// It is bounded: when full, `push` refuses and the sender backs off (drives progress until
/// there is room) instead of dropping a message or growing without limit.
class EagerQueue {
 public:
  explicit EagerQueue(size_t capacity) : capacity_(capacity) {}

  bool full() const { return items_.size() >= capacity_; }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  size_t capacity() const { return capacity_; }
  /// The most messages it ever held at once.
  size_t high_water() const { return high_water_; }

  /// False, leaving `item` untouched, when the queue is full.
  bool push(QueuedEager& item);
  QueuedEager& front() { return items_.front(); }
  void pop() { items_.pop_front(); }

 private:
  size_t capacity_;
  size_t high_water_ = 0;
  std::deque<QueuedEager> items_;
};

}  // namespace faultline::protocols::tagged
