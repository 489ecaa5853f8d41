#include <catch2/catch.hpp>

#if FAULTLINE_WITH_VERBS
#include <infiniband/verbs.h>

#include <string_view>

#include "faultline/transports/verbs/verbs_status_map.hpp"

using namespace faultline;
using namespace faultline::transports;
using faultline::transports::verbs::completion_status_from_ibv;

TEST_CASE("Every ibv_wc_status maps to the status of the same name", "[unit]") {
  // rdma-core's own status text and faultline's name describe the same status.
  for (int native = IBV_WC_SUCCESS; native <= IBV_WC_TM_RNDV_INCOMPLETE; ++native) {
    const CompletionStatus status = completion_status_from_ibv(native);
    CAPTURE(native, ibv_wc_status_str(static_cast<ibv_wc_status>(native)), to_string(status));
    CHECK(static_cast<int>(status) == native);
  }
  CHECK(completion_status_from_ibv(IBV_WC_RNR_RETRY_EXC_ERR) == CompletionStatus::kRnrRetryExcErr);
  CHECK(completion_status_from_ibv(IBV_WC_WR_FLUSH_ERR) == CompletionStatus::kWrFlushErr);
  CHECK(completion_status_from_ibv(IBV_WC_REM_ACCESS_ERR) == CompletionStatus::kRemAccessErr);
  CHECK(completion_status_from_ibv(IBV_WC_LOC_LEN_ERR) == CompletionStatus::kLocLenErr);
  CHECK(completion_status_from_ibv(IBV_WC_RETRY_EXC_ERR) == CompletionStatus::kRetryExcErr);
}

TEST_CASE("An unknown ibv_wc_status is a general error, never success", "[unit]") {
  CHECK(completion_status_from_ibv(9999) == CompletionStatus::kGeneralErr);
  CHECK(completion_status_from_ibv(-1) == CompletionStatus::kGeneralErr);
}
#endif
