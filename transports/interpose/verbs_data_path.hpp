#pragma once

#include <infiniband/verbs.h>

namespace faultline::transports::interpose {

/// The entries an instrumented context's ops table points at: each calls the provider's own
/// and applies the plan's completion and post faults.
int poll_cq_with_faults(ibv_cq* cq, int num_entries, ibv_wc* wc);
int post_send_with_faults(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr);
int post_recv_with_faults(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
int post_srq_recv_with_faults(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);

/// The vendor_err an injected error carries when its rule names none (no provider uses it).
constexpr uint32_t kInjectedVendorErr = 0x7a17;

}  // namespace faultline::transports::interpose
