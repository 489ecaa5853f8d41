#include "faultline/harness/bench/allreduce.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <numeric>
#include <thread>

#include "faultline/protocols/collective/recursive_doubling.hpp"
#include "statistics.hpp"

namespace faultline::harness::bench {

using protocols::collective::DataType;
using protocols::collective::doubling_partners;
using protocols::collective::DoublingLink;
using protocols::collective::RecursiveDoubling;
using protocols::collective::Ring;
using protocols::collective::RingOptions;
using Clock = std::chrono::steady_clock;

namespace {

// The ranks of one collective, each with its own device, connected for one algorithm.
// Destroyed in reverse order: the engines (which use the endpoints' memory) first, then the
// endpoints, the devices last.
struct CollectiveRanks {
  std::vector<std::unique_ptr<transports::Device>> devices;
  std::vector<std::unique_ptr<transports::Endpoint>> endpoints;
  std::vector<std::unique_ptr<Ring>> rings;
  std::vector<std::unique_ptr<RecursiveDoubling>> doublings;

  Status allreduce(size_t rank, std::span<std::byte> data) {
    return rings.empty() ? doublings[rank]->allreduce(data, DataType::kFloat32)
                         : rings[rank]->allreduce(data, DataType::kFloat32);
  }
};

// A new endpoint on rank `rank`'s device, kept until the ranks are destroyed.
Result<transports::Endpoint*> new_endpoint(CollectiveRanks& ranks, size_t rank) {
  transports::EndpointConfig config;
  config.send_depth = 64;
  config.recv_depth = 64;
  auto endpoint = ranks.devices[rank]->create_endpoint(config);
  if (!endpoint.ok()) return endpoint.error();
  ranks.endpoints.push_back(std::move(endpoint).value());
  return ranks.endpoints.back().get();
}

// `sender` sends to `receiver`: each connected to the other.
Status connect_one_way(transports::Endpoint& sender, transports::Endpoint& receiver) {
  FAULTLINE_RETURN_IF_ERROR(sender.connect(receiver.address()));
  return receiver.connect(sender.address());
}

// Rank i's to_next is connected to rank i+1's from_prev.
Status connect_ring(CollectiveRanks& ranks, const RingOptions& options) {
  const size_t n = ranks.devices.size();
  std::vector<transports::Endpoint*> to_next(n);
  std::vector<transports::Endpoint*> from_prev(n);
  for (size_t i = 0; i < n; ++i) {
    auto next = new_endpoint(ranks, i);
    if (!next.ok()) return next.error();
    auto prev = new_endpoint(ranks, i);
    if (!prev.ok()) return prev.error();
    to_next[i] = next.value();
    from_prev[i] = prev.value();
  }
  for (size_t i = 0; i < n; ++i)
    FAULTLINE_RETURN_IF_ERROR(connect_one_way(*to_next[i], *from_prev[(i + 1) % n]));
  for (size_t i = 0; i < n; ++i) {
    auto created = Ring::create({*ranks.devices[i], *to_next[i], *from_prev[i], i, n}, options);
    if (!created.ok()) return created.error();
    ranks.rings.push_back(std::move(created).value());
  }
  return {};
}

// Rank i and each of its partners p: i's to_peer[p] sends to p's from_peer[i], and back.
Status connect_doubling(CollectiveRanks& ranks, const RingOptions& options,
                        protocols::collective::DoublingExchange exchange) {
  const size_t n = ranks.devices.size();
  std::vector<std::map<size_t, transports::Endpoint*>> to_peer(n);
  std::vector<std::map<size_t, transports::Endpoint*>> from_peer(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t p : doubling_partners(i, n)) {
      auto to = new_endpoint(ranks, i);
      if (!to.ok()) return to.error();
      auto from = new_endpoint(ranks, i);
      if (!from.ok()) return from.error();
      to_peer[i][p] = to.value();
      from_peer[i][p] = from.value();
    }
  }
  for (size_t i = 0; i < n; ++i)
    for (const auto& [p, to] : to_peer[i])
      FAULTLINE_RETURN_IF_ERROR(connect_one_way(*to, *from_peer[p].at(i)));
  for (size_t i = 0; i < n; ++i) {
    DoublingLink link{*ranks.devices[i], {}, i, n};
    for (size_t p : doubling_partners(i, n))
      link.partners.push_back({p, *to_peer[i].at(p), *from_peer[i].at(p)});
    auto created = RecursiveDoubling::create(std::move(link), options, exchange);
    if (!created.ok()) return created.error();
    ranks.doublings.push_back(std::move(created).value());
  }
  return {};
}

Result<CollectiveRanks> open_ranks(const AllreduceOptions& options, size_t n, size_t bytes) {
  CollectiveRanks ranks;
  for (size_t i = 0; i < n; ++i) {
    auto device = open_target_device(options.target);
    if (!device.ok()) return device.error();
    ranks.devices.push_back(std::move(device).value());
  }
  const RingOptions ring_options{.chunk_bytes = options.chunk_bytes,
                                 .capacity = std::max<size_t>(bytes, 1),
                                 .check_status = options.check_status};
  using protocols::collective::AllreduceAlgorithm;
  using protocols::collective::DoublingExchange;
  switch (algorithm_for(options.algorithm, bytes)) {
    case AllreduceAlgorithm::kRecursiveDoubling:
      FAULTLINE_RETURN_IF_ERROR(
          connect_doubling(ranks, ring_options, DoublingExchange::kWholeMessage));
      break;
    case AllreduceAlgorithm::kHalvingDoubling:
      FAULTLINE_RETURN_IF_ERROR(connect_doubling(ranks, ring_options, DoublingExchange::kHalving));
      break;
    case AllreduceAlgorithm::kRing:
    case AllreduceAlgorithm::kAuto:  // resolved by algorithm_for: never left here
      FAULTLINE_RETURN_IF_ERROR(connect_ring(ranks, ring_options));
      break;
  }
  return ranks;
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
  auto opened = open_ranks(options, ranks, bytes);
  if (!opened.ok()) return opened.error();
  CollectiveRanks collective = std::move(opened).value();
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
          statuses[r] = collective.allreduce(r, std::as_writable_bytes(std::span(data)));
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
                   "ranks " + std::to_string(ranks) + ": an allreduce needs at least 2"};
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
