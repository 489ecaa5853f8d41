#include "faultline/transports/verbs/verbs_status_map.hpp"

#include <infiniband/verbs.h>

namespace faultline::transports::verbs {

// The one status table carries each status's ibv_wc_status value: checked against verbs.h.
static_assert(completion_status_row(CompletionStatus::kSuccess).ibv_wc_status == IBV_WC_SUCCESS);
static_assert(kCompletionStatusTable[IBV_WC_REM_ACCESS_ERR].status ==
              CompletionStatus::kRemAccessErr);
static_assert(kCompletionStatusTable[IBV_WC_GENERAL_ERR].status == CompletionStatus::kGeneralErr);
static_assert(kCompletionStatusTable.size() == IBV_WC_TM_RNDV_INCOMPLETE + 1);

CompletionStatus completion_status_from_ibv(int ibv_wc_status) {
  for (const auto& row : kCompletionStatusTable) {
    if (row.ibv_wc_status == ibv_wc_status) return row.status;
  }
  return CompletionStatus::kGeneralErr;
}

}  // namespace faultline::transports::verbs
