#pragma once

#include <cstdint>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"
#include "faultline/protocols/collective/allreduce_algorithm.hpp"

namespace faultline::harness::bench {

/// One (ranks, size) of allreduce, float32 sum; bandwidths as nccl-tests define them.
struct AllreduceRow {
  size_t ranks = 0;
  size_t bytes = 0;
  uint64_t iterations = 0;
  double median_us = 0;   ///< slowest rank, median over iterations
  double algbw_gb_s = 0;  ///< bytes / time, 10^9 bytes per second
  double busbw_gb_s = 0;  ///< algbw x 2(n-1)/n: what each link carried
  /// Elements that were not the sum, over every rank and iteration (nccl-tests' #wrong).
  uint64_t wrong = 0;
};

struct AllreduceOptions {
  transports::Target target;
  std::vector<size_t> ranks = {2, 3, 4};
  std::vector<size_t> sizes = {size_t{1} << 20, size_t{16} << 20};
  uint64_t iterations = 20;
  uint64_t warmup = 2;
  /// 1 MiB: on tcp every chunk above rxm's 16 KiB eager size is a rendezvous round trip, and
  /// 1 MiB chunks halved the 2-rank 1 MiB allreduce against 256 KiB (BENCHMARKS.md).
  size_t chunk_bytes = size_t{1} << 20;
  /// false: the ring takes every completion as a success without looking at its status, to
  /// measure what checking costs (MLX JACCL's fix cost about 1 us of a 16 KiB allreduce).
  /// The sum is checked either way.
  bool check_status = true;
  /// The ring, recursive doubling, or for each size the one `algorithm_for` picks.
  protocols::collective::AllreduceAlgorithm algorithm =
      protocols::collective::AllreduceAlgorithm::kAuto;
};

/// The protocols' allreduce with each rank on its own device and thread, as the agents
/// of a collective scenario hold them; every iteration's sum is checked.
Result<std::vector<AllreduceRow>> run_allreduce(const AllreduceOptions& options);

}  // namespace faultline::harness::bench
