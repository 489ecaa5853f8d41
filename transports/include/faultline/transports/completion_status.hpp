#pragma once

#include <array>
#include <cerrno>
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

// libfabric's own error numbers above the errno range (rdma/fi_errno.h; checked against it
// where the ofi transport includes it).
inline constexpr int kFiEtrunc = 265;
inline constexpr int kFiEoverrun = 268;
inline constexpr int kFiEnorx = 269;

/// One status: its name (scenario files, reports), its `enum ibv_wc_status` value, and the
/// libfabric error an injected completion of this status carries (`fi_cq_err_entry.err`).
struct CompletionStatusRow {
  CompletionStatus status;
  std::string_view name;
  int ibv_wc_status;
  int fi_errno;
};

/// The one table of completion statuses, in declaration order (for lookups, tables, tests).
inline constexpr std::array kCompletionStatusTable{
    CompletionStatusRow{CompletionStatus::kSuccess, "SUCCESS", 0, 0},
    CompletionStatusRow{CompletionStatus::kLocLenErr, "LOC_LEN_ERR", 1, kFiEtrunc},
    CompletionStatusRow{CompletionStatus::kLocQpOpErr, "LOC_QP_OP_ERR", 2, EINVAL},
    CompletionStatusRow{CompletionStatus::kLocEecOpErr, "LOC_EEC_OP_ERR", 3, EIO},
    CompletionStatusRow{CompletionStatus::kLocProtErr, "LOC_PROT_ERR", 4, EFAULT},
    CompletionStatusRow{CompletionStatus::kWrFlushErr, "WR_FLUSH_ERR", 5, ECANCELED},
    CompletionStatusRow{CompletionStatus::kMwBindErr, "MW_BIND_ERR", 6, EIO},
    CompletionStatusRow{CompletionStatus::kBadRespErr, "BAD_RESP_ERR", 7, EIO},
    CompletionStatusRow{CompletionStatus::kLocAccessErr, "LOC_ACCESS_ERR", 8, EIO},
    CompletionStatusRow{CompletionStatus::kRemInvReqErr, "REM_INV_REQ_ERR", 9, EOPNOTSUPP},
    CompletionStatusRow{CompletionStatus::kRemAccessErr, "REM_ACCESS_ERR", 10, EACCES},
    CompletionStatusRow{CompletionStatus::kRemOpErr, "REM_OP_ERR", 11, EREMOTEIO},
    CompletionStatusRow{CompletionStatus::kRetryExcErr, "RETRY_EXC_ERR", 12, ETIMEDOUT},
    CompletionStatusRow{CompletionStatus::kRnrRetryExcErr, "RNR_RETRY_EXC_ERR", 13, kFiEnorx},
    CompletionStatusRow{CompletionStatus::kLocRddViolErr, "LOC_RDD_VIOL_ERR", 14, EIO},
    CompletionStatusRow{CompletionStatus::kRemInvRdReqErr, "REM_INV_RD_REQ_ERR", 15, EIO},
    CompletionStatusRow{CompletionStatus::kRemAbortErr, "REM_ABORT_ERR", 16, EIO},
    CompletionStatusRow{CompletionStatus::kInvEecnErr, "INV_EECN_ERR", 17, EIO},
    CompletionStatusRow{CompletionStatus::kInvEecStateErr, "INV_EEC_STATE_ERR", 18, EIO},
    CompletionStatusRow{CompletionStatus::kFatalErr, "FATAL_ERR", 19, kFiEoverrun},
    CompletionStatusRow{CompletionStatus::kRespTimeoutErr, "RESP_TIMEOUT_ERR", 20, EIO},
    CompletionStatusRow{CompletionStatus::kGeneralErr, "GENERAL_ERR", 21, EIO},
    CompletionStatusRow{CompletionStatus::kTmErr, "TM_ERR", 22, EIO},
    CompletionStatusRow{CompletionStatus::kTmRndvIncomplete, "TM_RNDV_INCOMPLETE", 23, EIO},
};

/// The verbs-style name without the IBV_WC_ prefix: "SUCCESS", "REM_ACCESS_ERR", ...
/// These names are what scenario files and reports use.
std::string_view to_string(CompletionStatus status);
/// Inverse of to_string; nullopt for an unknown name.
std::optional<CompletionStatus> completion_status_from_string(std::string_view name);
/// The row of `status` in kCompletionStatusTable (the table is in declaration order).
constexpr const CompletionStatusRow& completion_status_row(CompletionStatus status) {
  return kCompletionStatusTable[static_cast<size_t>(status)];
}

}  // namespace faultline::transports
