#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/transports/completion_status.hpp"

namespace faultline::transports::interpose {

/// Which completions a rule looks at: those of sends (and writes, reads), of receives, or all.
enum class Side { kAny, kSend, kRecv };

/// One fault of the plan a program runs under: the scenario fault language (`kind`, `status`,
/// `nth`, `every`) with the filters a program needs (`side`, `layer`, `rank`).
struct FaultRule {
  std::string kind = "rewrite_status";
  transports::CompletionStatus status = transports::CompletionStatus::kGeneralErr;
  uint32_t vendor_err = 0;
  Side side = Side::kAny;
  /// The provider layer whose completions count ("ofi_rxm", "tcp"); empty: the program's own,
  /// the outermost layer it reads.
  std::string layer;
  std::optional<int> rank;  ///< only in the process of this rank (from the launcher)
  uint64_t nth = 0;         ///< the nth matching completion (from 1)
  uint64_t every = 0;       ///< every k-th matching completion
  uint64_t matched = 0;     ///< matching completions seen so far

  /// Counts one matching completion; true when this one is to be faulted.
  bool fires();
};

/// The rules of `plan` (`{"faults": [...]}`), or kInvalidArgument naming the fault's index, the
/// field and what was expected.
Result<std::vector<FaultRule>> parse_fault_rules(const nlohmann::json& plan);

/// The rules of FAULTLINE_FAULTS (JSON text, or `@path` of a file); none when it is unset.
Result<std::vector<FaultRule>> fault_rules_from_environment();

/// This process's rank as its launcher gave it (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,
/// SLURM_PROCID), or nullopt.
std::optional<int> launcher_rank();

}  // namespace faultline::transports::interpose
