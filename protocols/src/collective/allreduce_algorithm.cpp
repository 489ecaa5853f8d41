#include "faultline/protocols/collective/allreduce_algorithm.hpp"

namespace faultline::protocols::collective {

std::string_view to_string(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::kRing: return "ring";
    case AllreduceAlgorithm::kRecursiveDoubling: return "recursive_doubling";
    case AllreduceAlgorithm::kHalvingDoubling: return "halving_doubling";
    case AllreduceAlgorithm::kAuto: return "auto";
  }
  return "auto";
}

std::optional<AllreduceAlgorithm> allreduce_algorithm_from_string(std::string_view name) {
  for (auto algorithm : kAllreduceAlgorithms)
    if (name == to_string(algorithm)) return algorithm;
  return std::nullopt;
}

AllreduceAlgorithm algorithm_for(AllreduceAlgorithm algorithm, size_t bytes) {
  if (algorithm != AllreduceAlgorithm::kAuto) return algorithm;
  return bytes <= kDoublingUpToBytes ? AllreduceAlgorithm::kRecursiveDoubling
                                     : AllreduceAlgorithm::kRing;
}

}  // namespace faultline::protocols::collective
