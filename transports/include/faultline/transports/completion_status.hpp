#pragma once

#include <optional>
#include <string_view>

namespace faultline::transports {

/// The one completion status of every transport, named after `enum ibv_wc_status`.
/// Each transport maps its native codes into it and keeps the native code beside it.
enum class CompletionStatus {
  kSuccess,
  kLocLenErr,
  kLocQpOpErr,
  kLocEecOpErr,
  kLocProtErr,
  kWrFlushErr,
  kMwBindErr,
  kBadRespErr,
  kLocAccessErr,
  kRemInvReqErr,
  kRemAccessErr,
  kRemOpErr,
  kRetryExcErr,
  kRnrRetryExcErr,
  kLocRddViolErr,
  kRemInvRdReqErr,
  kRemAbortErr,
  kInvEecnErr,
  kInvEecStateErr,
  kFatalErr,
  kRespTimeoutErr,
  kGeneralErr,
  kTmErr,
  kTmRndvIncomplete,
};

/// Every value of CompletionStatus, in declaration order (for tables and tests).
inline constexpr CompletionStatus kAllCompletionStatuses[] = {
    CompletionStatus::kSuccess,        CompletionStatus::kLocLenErr,
    CompletionStatus::kLocQpOpErr,     CompletionStatus::kLocEecOpErr,
    CompletionStatus::kLocProtErr,     CompletionStatus::kWrFlushErr,
    CompletionStatus::kMwBindErr,      CompletionStatus::kBadRespErr,
    CompletionStatus::kLocAccessErr,   CompletionStatus::kRemInvReqErr,
    CompletionStatus::kRemAccessErr,   CompletionStatus::kRemOpErr,
    CompletionStatus::kRetryExcErr,    CompletionStatus::kRnrRetryExcErr,
    CompletionStatus::kLocRddViolErr,  CompletionStatus::kRemInvRdReqErr,
    CompletionStatus::kRemAbortErr,    CompletionStatus::kInvEecnErr,
    CompletionStatus::kInvEecStateErr, CompletionStatus::kFatalErr,
    CompletionStatus::kRespTimeoutErr, CompletionStatus::kGeneralErr,
    CompletionStatus::kTmErr,          CompletionStatus::kTmRndvIncomplete,
};

/// The verbs-style name without the IBV_WC_ prefix: "SUCCESS", "REM_ACCESS_ERR", ...
/// These names are what scenario files and reports use.
std::string_view to_string(CompletionStatus status);
/// Inverse of to_string; nullopt for an unknown name.
std::optional<CompletionStatus> completion_status_from_string(std::string_view name);

}  // namespace faultline::transports
