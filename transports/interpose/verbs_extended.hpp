#pragma once

#include <infiniband/verbs.h>

namespace faultline::transports::interpose {

/// The extended context's entries (ibv_create_cq_ex, ibv_create_qp_ex, ibv_query_device_ex are
/// inline calls through them): limits are applied at create, and each extended CQ's polling
/// and each extended QP's `ibv_wr_*` posting get the plan's faults.
ibv_cq_ex* create_cq_ex_with_faults(ibv_context* context, ibv_cq_init_attr_ex* attr);
ibv_qp* create_qp_ex_with_faults(ibv_context* context, ibv_qp_init_attr_ex* attr);
int query_device_ex_with_caps(ibv_context* context, const ibv_query_device_ex_input* input,
                              ibv_device_attr_ex* attr, size_t attr_size);

}  // namespace faultline::transports::interpose
