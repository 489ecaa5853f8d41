#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "faultline/transports/completion_status.hpp"
#include "faultline/transports/types.hpp"

namespace faultline::transports::fault {

/// Which of the completions matching a fault it fires on: exactly one of the three is set.
struct FiringRule {
  uint64_t nth = 0;          ///< the N-th matching completion (1-based), once
  uint64_t every = 0;        ///< every k-th matching completion
  double probability = 0.0;  ///< each matching completion with probability p (seeded)
};

enum class CompletionFaultKind {
  kRewriteStatus,  ///< the completion carries `status` instead of what happened
  kDrop,           ///< the completion is never returned
  kDelay,          ///< the completion is held back for `delay`
  kDuplicate,      ///< the completion is returned twice
  kReplay,         ///< returned again after the next connect of any endpoint of the device (stale)
};

struct CompletionFault {
  CompletionFaultKind kind = CompletionFaultKind::kRewriteStatus;
  std::optional<Opcode> opcode;  ///< only completions of this opcode; nullopt matches all
  FiringRule when;
  CompletionStatus status = CompletionStatus::kGeneralErr;  ///< for kRewriteStatus
  /// For kRewriteStatus: overwrite the local buffer of the failed operation (the receive
  /// buffer, or the destination of a read) with garbage, as a failed RDMA leaves it.
  bool scribble = false;
  std::chrono::milliseconds delay{0};  ///< for kDelay
  /// For kReplay: the stale completion comes back carrying the new endpoint's qp number, as
  /// when a reconnect gets the same number back (only the work-request id tells it apart).
  bool reuse_qp_number = false;
};

enum class PostKind { kSend, kRecv };

/// The N-th post of a kind fails with `sys_errno`, as the native post call would.
struct PostFault {
  PostKind post = PostKind::kSend;
  uint64_t nth = 1;
  int sys_errno = 0;
};

enum class InlineOverride {
  kNone,
  kForceOff,         ///< endpoints are created with max_inline 0 and no post is inline
  kForceAboveLimit,  ///< every send and write is posted inline, whatever its size
};

/// Everything the decorator does to one side of a scenario. Built by the harness from a
/// scenario's `faults` block; seeded so the same seed fires the same faults.
struct FaultPlan {
  uint64_t seed = 0;
  std::vector<CompletionFault> completions;
  std::vector<PostFault> posts;
  InlineOverride inline_override = InlineOverride::kNone;
  /// Device limits replaced by these values ("max_qp_wr" -> 65535), as a profile of a device
  /// that is not at hand; endpoint configs are checked against the result.
  std::map<std::string, uint64_t> limits;
  std::string limits_source;  ///< where the limits came from, for the record

  bool empty() const {
    return completions.empty() && posts.empty() && inline_override == InlineOverride::kNone &&
           limits.empty();
  }
};

/// Every `kind` an AppliedFault can have.
const std::vector<std::string>& applied_fault_kinds();

/// One fault the decorator applied, in the order applied.
struct AppliedFault {
  std::string kind;    ///< "rewrite_status", "drop", "fail_post", "inline_off", "limits", ...
  std::string detail;  ///< "RDMA_WRITE wr_id 0x3 SUCCESS -> REM_ACCESS_ERR (2nd match)"
};

/// The names of DeviceLimits fields a plan may override, in declaration order.
const std::vector<std::string>& overridable_limit_names();

/// The value of the limit `name` in `limits`; nullopt for a limit the device does not
/// advertise (or a name that is none).
std::optional<uint64_t> limit_value(const DeviceLimits& limits, const std::string& name);

/// `limits` with `plan.limits` applied; an unknown name is ignored (the loader refuses it).
DeviceLimits apply_limit_overrides(DeviceLimits limits,
                                   const std::map<std::string, uint64_t>& overrides);

}  // namespace faultline::transports::fault
