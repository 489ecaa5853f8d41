// The probe's host clock: a thread that shares its only CPU with a busy one waits for it, and
// the clock says so; the waits between two empty polls are left out.
#include "scenario/run_queue_clock.hpp"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

using namespace faultline::harness;
using namespace std::chrono_literals;

namespace {

bool pin_to_first_cpu() {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

// This thread on CPU 0 with a rival spinning there too, until destroyed; then as it was.
class SharedCpu {
 public:
  SharedCpu() {
    pthread_getaffinity_np(pthread_self(), sizeof was_, &was_);
    pinned_ = pin_to_first_cpu();
    rival_ = std::thread([this] {
      pin_to_first_cpu();
      while (!stop_) {
      }
    });
  }
  ~SharedCpu() {
    stop_ = true;
    rival_.join();
    pthread_setaffinity_np(pthread_self(), sizeof was_, &was_);
  }
  SharedCpu(const SharedCpu&) = delete;
  SharedCpu& operator=(const SharedCpu&) = delete;
  bool pinned() const { return pinned_; }

 private:
  cpu_set_t was_{};
  bool pinned_ = false;
  std::atomic<bool> stop_{false};
  std::thread rival_;
};

void spin_for(std::chrono::milliseconds how_long) {
  const auto until = std::chrono::steady_clock::now() + how_long;
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

TEST_CASE("a thread sharing its one CPU with a busy thread has waited for it", "[unit]") {
  RunQueueClock clock;
  REQUIRE(clock.available());  // Debian's kernels keep scheduler statistics (CONFIG_SCHED_INFO)
  std::chrono::nanoseconds waited{0};
  {
    SharedCpu shared;
    REQUIRE(shared.pinned());
    const auto before = clock.waited();
    spin_for(200ms);
    waited = clock.waited() - before;
  }
  // Two runnable threads on one CPU for 200 ms: this one waited for a share of it.
  CHECK(waited > 10ms);
  CHECK(waited < 400ms);
}

TEST_CASE("waits between two empty polls delayed nothing and are left out", "[unit]") {
  DelayingWaits waits;
  REQUIRE(waits.available());
  RunQueueClock whole;
  SharedCpu shared;
  REQUIRE(shared.pinned());
  const auto before = waits.so_far();
  const auto whole_before = whole.waited();
  waits.polled_empty();
  spin_for(100ms);  // waits for the CPU between two polls that found nothing
  waits.polled_empty();
  waits.wait_ended();
  const auto idle_left_out = waits.so_far() - before;
  const auto idle_whole = whole.waited() - whole_before;
  spin_for(100ms);  // waits that no empty poll excuses
  const auto counted = waits.so_far() - before - idle_left_out;
  // What is left of the idle stretch is at most the preemptions just outside its two polls
  // (a time slice each, more on a busy host): a small part of the wait inside it.
  CHECK(idle_whole > 10ms);
  CHECK(idle_left_out < idle_whole / 3);
  CHECK(counted > 10ms);
}
