#include "faultline/transports/completion_status.hpp"

namespace faultline::transports {

std::string_view to_string(CompletionStatus status) {
  switch (status) {
    case CompletionStatus::kSuccess: return "SUCCESS";
    case CompletionStatus::kLocLenErr: return "LOC_LEN_ERR";
    case CompletionStatus::kLocQpOpErr: return "LOC_QP_OP_ERR";
    case CompletionStatus::kLocEecOpErr: return "LOC_EEC_OP_ERR";
    case CompletionStatus::kLocProtErr: return "LOC_PROT_ERR";
    case CompletionStatus::kWrFlushErr: return "WR_FLUSH_ERR";
    case CompletionStatus::kMwBindErr: return "MW_BIND_ERR";
    case CompletionStatus::kBadRespErr: return "BAD_RESP_ERR";
    case CompletionStatus::kLocAccessErr: return "LOC_ACCESS_ERR";
    case CompletionStatus::kRemInvReqErr: return "REM_INV_REQ_ERR";
    case CompletionStatus::kRemAccessErr: return "REM_ACCESS_ERR";
    case CompletionStatus::kRemOpErr: return "REM_OP_ERR";
    case CompletionStatus::kRetryExcErr: return "RETRY_EXC_ERR";
    case CompletionStatus::kRnrRetryExcErr: return "RNR_RETRY_EXC_ERR";
    case CompletionStatus::kLocRddViolErr: return "LOC_RDD_VIOL_ERR";
    case CompletionStatus::kRemInvRdReqErr: return "REM_INV_RD_REQ_ERR";
    case CompletionStatus::kRemAbortErr: return "REM_ABORT_ERR";
    case CompletionStatus::kInvEecnErr: return "INV_EECN_ERR";
    case CompletionStatus::kInvEecStateErr: return "INV_EEC_STATE_ERR";
    case CompletionStatus::kFatalErr: return "FATAL_ERR";
    case CompletionStatus::kRespTimeoutErr: return "RESP_TIMEOUT_ERR";
    case CompletionStatus::kGeneralErr: return "GENERAL_ERR";
    case CompletionStatus::kTmErr: return "TM_ERR";
    case CompletionStatus::kTmRndvIncomplete: return "TM_RNDV_INCOMPLETE";
  }
  return "UNKNOWN";
}

std::optional<CompletionStatus> completion_status_from_string(std::string_view name) {
  for (CompletionStatus status : kAllCompletionStatuses) {
    if (to_string(status) == name) return status;
  }
  return std::nullopt;
}

}  // namespace faultline::transports
