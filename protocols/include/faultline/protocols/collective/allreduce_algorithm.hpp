#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace faultline::protocols::collective {

/// How an allreduce moves its data: the ring (bandwidth-bound: 2 (n - 1) steps of 1/n of the
/// message), recursive doubling (latency-bound: log2 n steps of all of it), halving-doubling
/// (the ring's volume in 2 log2 n steps), or `kAuto`: recursive doubling or the ring, by the
/// message's size.
enum class AllreduceAlgorithm { kRing, kRecursiveDoubling, kHalvingDoubling, kAuto };
inline constexpr std::array kAllreduceAlgorithms{
    AllreduceAlgorithm::kRing, AllreduceAlgorithm::kRecursiveDoubling,
    AllreduceAlgorithm::kHalvingDoubling, AllreduceAlgorithm::kAuto};

std::string_view to_string(AllreduceAlgorithm algorithm);
/// "ring", "recursive_doubling", "halving_doubling" or "auto".
std::optional<AllreduceAlgorithm> allreduce_algorithm_from_string(std::string_view name);

/// Up to this many bytes `kAuto` takes recursive doubling, above it the ring (measured with
/// `faultline bench allreduce` on ofi tcp and shm at 2 to 4 ranks: BENCHMARKS.md).
inline constexpr size_t kDoublingUpToBytes = size_t{128} * 1024;

/// `algorithm` for one message of `bytes`: kAuto resolved, the others as they are.
AllreduceAlgorithm algorithm_for(AllreduceAlgorithm algorithm, size_t bytes);

}  // namespace faultline::protocols::collective
