#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/transports/completion_status.hpp"
#include "faultline/transports/types.hpp"

namespace faultline::transports::interpose {

/// What a fault does (the scenario fault kinds an unmodified program can be given).
enum class FaultKind {
  kRewriteStatus,        ///< a successful completion becomes an error
  kCorruptData,          ///< the completion stays successful; its received data is not right
  kDropCompletion,       ///< the completion never reaches the program
  kDuplicateCompletion,  ///< the program reads it twice
  kFailPost,             ///< the N-th post returns an errno and nothing is posted
  kLimits,               ///< the device is smaller: creates above a cap are refused
  kObserve,              ///< nothing changes: every resource request is logged (port-check)
};

/// Which operations a rule looks at: sends (and writes, reads), receives, or all.
enum class Side { kAny, kSend, kRecv };

/// What happens to the data a faulted receive completion delivered.
enum class DataAction {
  kKeep,
  kScribble,  ///< every byte it delivered changes (+0x5B modulo 256)
  kSuppress,  ///< the buffer holds what it held when the receive was posted
};

/// A smaller device: the scenario `limits` fields an interposer enforces.
struct LimitCaps {
  std::optional<uint32_t> max_qp_wr;
  std::optional<uint32_t> max_recv_wr;
  std::optional<uint32_t> max_cqe;
  std::optional<uint32_t> max_send_sge;
  std::optional<uint32_t> max_recv_sge;
  std::optional<uint32_t> max_inline_data;
  std::optional<uint32_t> max_srq_wr;
  std::optional<uint32_t> max_srq_sge;
  std::optional<uint32_t> max_qp_rd_atom;  ///< bounds a QP's max_rd_atomic and max_dest_rd_atomic
  std::optional<uint64_t> max_mr_size;
  std::optional<uint32_t> atomic_cap;  ///< enum ibv_atomic_cap: 0 none, 1 HCA, 2 global
  // Not caps: who the device says it is (programs such as perftest and UCX branch on them).
  std::optional<uint32_t> vendor_id;
  std::optional<uint32_t> vendor_part_id;
  int refusal_errno = 22;     ///< what a refused create returns (the target driver's; EINVAL)
  bool clamp_inline = false;  ///< an inline request above the cap is granted the cap (hns);
                              ///< a larger inline post then fails, instead of the create
};

/// One fault of the plan a program runs under: the scenario fault language (`kind`, `status`,
/// `nth`, `every`, `probability`, `opcode`) with the filters a program needs (`side`, `layer`,
/// `rank`, `qp_num`).
struct FaultRule {
  FaultKind kind = FaultKind::kRewriteStatus;
  transports::CompletionStatus status = transports::CompletionStatus::kGeneralErr;
  uint32_t vendor_err = 0;
  DataAction data = DataAction::kKeep;
  bool qp_error = false;  ///< verbs: the QP also moves to the error state (flushes follow)
  int error_number = 0;   ///< fail_post: the errno the post returns
  LimitCaps caps;         ///< limits

  Side side = Side::kAny;
  /// The provider layer whose completions count ("ofi_rxm", "tcp"); empty: the program's own,
  /// the outermost layer it reads.
  std::string layer;
  std::optional<int> rank;  ///< only in the process of this rank (from the launcher)
  std::optional<transports::Opcode> opcode;
  std::optional<uint32_t> qp_num;  ///< verbs: only this QP's completions and posts

  uint64_t nth = 0;        ///< the nth matching event (from 1)
  uint64_t every = 0;      ///< every k-th matching event
  double probability = 0;  ///< each matching event with this probability (the plan's seed)
  uint64_t matched = 0;    ///< matching events seen so far

  /// Counts one matching event; true when this one is to be faulted.
  bool fires(std::mt19937_64& random);
  /// The scenario spelling of `kind`.
  std::string kind_name() const;
};

/// A parsed plan: its rules and the seed of their probabilities.
struct FaultPlanRules {
  std::vector<FaultRule> rules;
  uint64_t seed = 1;
};

/// The rules of `plan` (`{"faults": [...], "seed": N}`), or kInvalidArgument naming the fault's
/// index, the field and what was expected.
Result<FaultPlanRules> parse_fault_rules(const nlohmann::json& plan);

/// The rules of FAULTLINE_FAULTS (JSON text, or `@path` of a file); none when it is unset.
Result<FaultPlanRules> fault_rules_from_environment();

/// This process's rank as its launcher gave it (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,
/// SLURM_PROCID), or nullopt.
std::optional<int> launcher_rank();

}  // namespace faultline::transports::interpose
