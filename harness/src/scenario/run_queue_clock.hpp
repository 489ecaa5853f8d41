// How long this thread has waited for a CPU: the host-side delay the monitor's probe subtracts
// from its round trips (a round trip during which a side waited says nothing of the fabric).
#pragma once

#include <chrono>
#include <optional>

#include "builtin_steps.hpp"

namespace faultline::harness {

/// This thread's time runnable but not running, from Linux's scheduler statistics
/// (/proc/thread-self/schedstat, its second field: nanoseconds on a run queue; the kernel's
/// CONFIG_SCHED_INFO). Open it on the thread it measures.
class RunQueueClock {
 public:
  RunQueueClock();
  ~RunQueueClock();
  RunQueueClock(const RunQueueClock&) = delete;
  RunQueueClock& operator=(const RunQueueClock&) = delete;

  /// False where the kernel gives no scheduler statistics: waited() is then always zero.
  bool available() const { return fd_ >= 0; }
  /// The thread's whole wait so far (one pread, a few microseconds).
  std::chrono::nanoseconds waited() const;

 private:
  int fd_ = -1;
};

/// The waits for a CPU that delayed something: the thread's whole wait, less what it waited
/// between two empty polls of one completion wait (nothing had arrived yet: nothing waited
/// on it). Watches a PairSide's polls (PairSide::watch_polls).
class DelayingWaits final : public PollWatcher {
 public:
  bool available() const { return clock_.available(); }
  std::chrono::nanoseconds so_far() const { return clock_.waited() - idle_; }

  void polled_empty() override {
    last_empty_ = clock_.waited();
    if (!first_empty_) first_empty_ = last_empty_;
  }
  void wait_ended() override {
    if (first_empty_) idle_ += *last_empty_ - *first_empty_;
    first_empty_.reset();
  }

 private:
  RunQueueClock clock_;
  std::optional<std::chrono::nanoseconds> first_empty_;
  std::optional<std::chrono::nanoseconds> last_empty_;
  std::chrono::nanoseconds idle_{0};
};

}  // namespace faultline::harness
