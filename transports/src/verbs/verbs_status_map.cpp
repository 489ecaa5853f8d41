#include "faultline/transports/verbs/verbs_status_map.hpp"

#include <infiniband/verbs.h>

#include <array>

namespace faultline::transports::verbs {

namespace {

struct IbvStatusRow {
  ibv_wc_status native;
  CompletionStatus status;
};

constexpr std::array kIbvStatusTable{
    IbvStatusRow{IBV_WC_SUCCESS, CompletionStatus::kSuccess},
    IbvStatusRow{IBV_WC_LOC_LEN_ERR, CompletionStatus::kLocLenErr},
    IbvStatusRow{IBV_WC_LOC_QP_OP_ERR, CompletionStatus::kLocQpOpErr},
    IbvStatusRow{IBV_WC_LOC_EEC_OP_ERR, CompletionStatus::kLocEecOpErr},
    IbvStatusRow{IBV_WC_LOC_PROT_ERR, CompletionStatus::kLocProtErr},
    IbvStatusRow{IBV_WC_WR_FLUSH_ERR, CompletionStatus::kWrFlushErr},
    IbvStatusRow{IBV_WC_MW_BIND_ERR, CompletionStatus::kMwBindErr},
    IbvStatusRow{IBV_WC_BAD_RESP_ERR, CompletionStatus::kBadRespErr},
    IbvStatusRow{IBV_WC_LOC_ACCESS_ERR, CompletionStatus::kLocAccessErr},
    IbvStatusRow{IBV_WC_REM_INV_REQ_ERR, CompletionStatus::kRemInvReqErr},
    IbvStatusRow{IBV_WC_REM_ACCESS_ERR, CompletionStatus::kRemAccessErr},
    IbvStatusRow{IBV_WC_REM_OP_ERR, CompletionStatus::kRemOpErr},
    IbvStatusRow{IBV_WC_RETRY_EXC_ERR, CompletionStatus::kRetryExcErr},
    IbvStatusRow{IBV_WC_RNR_RETRY_EXC_ERR, CompletionStatus::kRnrRetryExcErr},
    IbvStatusRow{IBV_WC_LOC_RDD_VIOL_ERR, CompletionStatus::kLocRddViolErr},
    IbvStatusRow{IBV_WC_REM_INV_RD_REQ_ERR, CompletionStatus::kRemInvRdReqErr},
    IbvStatusRow{IBV_WC_REM_ABORT_ERR, CompletionStatus::kRemAbortErr},
    IbvStatusRow{IBV_WC_INV_EECN_ERR, CompletionStatus::kInvEecnErr},
    IbvStatusRow{IBV_WC_INV_EEC_STATE_ERR, CompletionStatus::kInvEecStateErr},
    IbvStatusRow{IBV_WC_FATAL_ERR, CompletionStatus::kFatalErr},
    IbvStatusRow{IBV_WC_RESP_TIMEOUT_ERR, CompletionStatus::kRespTimeoutErr},
    IbvStatusRow{IBV_WC_GENERAL_ERR, CompletionStatus::kGeneralErr},
    IbvStatusRow{IBV_WC_TM_ERR, CompletionStatus::kTmErr},
    IbvStatusRow{IBV_WC_TM_RNDV_INCOMPLETE, CompletionStatus::kTmRndvIncomplete},
};

}  // namespace

CompletionStatus completion_status_from_ibv(int ibv_wc_status) {
  for (const auto& row : kIbvStatusTable) {
    if (row.native == ibv_wc_status) return row.status;
  }
  return CompletionStatus::kGeneralErr;
}

}  // namespace faultline::transports::verbs
