#include "faultline/harness/bench/allreduce.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>

#include "faultline/protocols/collective/ring.hpp"
#include "statistics.hpp"

namespace faultline::harness::bench {

using protocols::collective::DataType;
using protocols::collective::Ring;
using Clock = std::chrono::steady_clock;

namespace {

// The ranks of one ring: rank i's to_next is connected to rank i+1's from_prev. Destroyed in
// reverse order: the rings (which use the endpoints' memory) first, the devices last.
struct RingRanks {
  std::vector<std::unique_ptr<transports::Device>> devices;
  std::vector<std::unique_ptr<transports::Endpoint>> to_next;
  std::vector<std::unique_ptr<transports::Endpoint>> from_prev;
  std::vector<std::unique_ptr<Ring>> rings;
};

Result<RingRanks> open_ring(const AllreduceOptions& options, size_t ranks, size_t bytes) {
  RingRanks ring;
  transports::EndpointConfig config;
  config.send_depth = 64;
  config.recv_depth = 64;
  for (size_t i = 0; i < ranks; ++i) {
    auto device = open_target_device(options.target);
    if (!device.ok()) return device.error();
    ring.devices.push_back(std::move(device).value());
    auto next = ring.devices.back()->create_endpoint(config);
    if (!next.ok()) return next.error();
    auto prev = ring.devices.back()->create_endpoint(config);
    if (!prev.ok()) return prev.error();
    ring.to_next.push_back(std::move(next).value());
    ring.from_prev.push_back(std::move(prev).value());
  }
  for (size_t i = 0; i < ranks; ++i) {
    auto& next_prev = *ring.from_prev[(i + 1) % ranks];
    FAULTLINE_RETURN_IF_ERROR(ring.to_next[i]->connect(next_prev.address()));
    FAULTLINE_RETURN_IF_ERROR(next_prev.connect(ring.to_next[i]->address()));
  }
  for (size_t i = 0; i < ranks; ++i) {
    auto created = Ring::create({*ring.devices[i], *ring.to_next[i], *ring.from_prev[i], i, ranks},
                                {.chunk_bytes = options.chunk_bytes,
                                 .capacity = std::max<size_t>(bytes, 1),
                                 .check_status = options.check_status});
    if (!created.ok()) return created.error();
    ring.rings.push_back(std::move(created).value());
  }
  return ring;
}

// The ranks start each operation together, as MPI_Barrier starts Open MPI's: spinning (and
// yielding when ranks outnumber cores), not sleeping in a futex, whose wake-up of one rank tens
// of microseconds after another would count in every operation's time.
class SpinBarrier {
 public:
  explicit SpinBarrier(size_t parties) : parties_(parties) {}
  void arrive_and_wait() {
    const size_t generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
    while (generation_.load(std::memory_order_acquire) == generation) sched_yield();
  }

 private:
  const size_t parties_;
  std::atomic<size_t> arrived_{0};
  std::atomic<size_t> generation_{0};
};

// Rank r's element e is r + (e % 7): small integers, so every sum is exact in float32.
void fill(std::vector<float>& data, size_t rank) {
  for (size_t e = 0; e < data.size(); ++e) data[e] = static_cast<float>(rank + e % 7);
}

// The elements of `data` that are not the sum of the ranks' elements.
uint64_t wrong_elements(const std::vector<float>& data, size_t ranks) {
  const size_t rank_sum = ranks * (ranks - 1) / 2;  // 0 + 1 + ... + (ranks - 1)
  const float base = static_cast<float>(rank_sum);
  uint64_t wrong = 0;
  for (size_t e = 0; e < data.size(); ++e)
    wrong += data[e] != base + static_cast<float>(ranks * (e % 7)) ? 1 : 0;
  return wrong;
}

Result<AllreduceRow> measure(const AllreduceOptions& options, size_t ranks, size_t bytes) {
  auto opened = open_ring(options, ranks, bytes);
  if (!opened.ok()) return opened.error();
  RingRanks ring = std::move(opened).value();
  const uint64_t total = options.warmup + options.iterations;
  std::vector<std::vector<double>> seconds(ranks);
  std::vector<Status> statuses(ranks);
  std::vector<uint64_t> wrong(ranks, 0);
  SpinBarrier start_together(ranks);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      std::vector<float> data(bytes / sizeof(float));
      for (uint64_t i = 0; i < total; ++i) {
        fill(data, r);
        start_together.arrive_and_wait();
        const auto started = Clock::now();
        if (statuses[r].ok())
          statuses[r] =
              ring.rings[r]->allreduce(std::as_writable_bytes(std::span(data)), DataType::kFloat32);
        const double took = std::chrono::duration<double>(Clock::now() - started).count();
        if (i >= options.warmup) seconds[r].push_back(took);
        if (statuses[r].ok()) wrong[r] += wrong_elements(data, ranks);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (size_t r = 0; r < ranks; ++r) {
    if (!statuses[r].ok()) {
      Error error = statuses[r].error();
      error.message =
          "rank " + std::to_string(r) + " of " + std::to_string(ranks) + ": " + error.message;
      return error;
    }
  }
  std::vector<double> slowest(options.iterations, 0);
  for (size_t r = 0; r < ranks; ++r)
    for (size_t i = 0; i < slowest.size(); ++i) slowest[i] = std::max(slowest[i], seconds[r][i]);
  const double median = percentile(slowest, 0.5);
  const double algbw = static_cast<double>(bytes) / median / 1e9;
  const double n = static_cast<double>(ranks);
  return AllreduceRow{ranks,
                      bytes,
                      options.iterations,
                      median * 1e6,
                      algbw,
                      algbw * 2 * (n - 1) / n,
                      std::accumulate(wrong.begin(), wrong.end(), uint64_t{0})};
}

}  // namespace

Result<std::vector<AllreduceRow>> run_allreduce(const AllreduceOptions& options) {
  if (options.ranks.empty() || options.sizes.empty() || options.iterations == 0)
    return Error{ErrorCode::kInvalidArgument, "nothing to measure: no ranks, sizes or iterations"};
  for (size_t ranks : options.ranks)
    if (ranks < 2)
      return Error{ErrorCode::kInvalidArgument,
                   "ranks " + std::to_string(ranks) + ": a ring needs at least 2"};
  for (size_t bytes : options.sizes)
    if (bytes == 0 || bytes % sizeof(float) != 0)
      return Error{
          ErrorCode::kInvalidArgument,
          "size " + std::to_string(bytes) + ": expected a positive multiple of 4 (float32)"};
  std::vector<AllreduceRow> rows;
  for (size_t ranks : options.ranks) {
    for (size_t bytes : options.sizes) {
      auto row = measure(options, ranks, bytes);
      if (!row.ok()) return row.error();
      rows.push_back(row.value());
    }
  }
  return rows;
}

}  // namespace faultline::harness::bench
