#pragma once

#include <rdma/fabric.h>

namespace faultline::transports::interpose {

/// `limits` on a libfabric program, as a provider with the target's limits answers it. The
/// caps map onto fi_info attributes: max_qp_wr tx_attr->size, max_recv_wr rx_attr->size,
/// max_send_sge tx_attr->iov_limit, max_recv_sge rx_attr->iov_limit, max_sge_rd
/// tx_attr->rma_iov_limit, max_inline_data tx_attr->inject_size, max_msg_size
/// ep_attr->max_msg_size. Only the program's own calls are capped, not those a utility
/// provider makes to its core inside them.

/// -FI_ENODATA, logged, when the program's hints ask more than a cap (no provider matches);
/// 0 when they fit.
int refuse_hints(const fi_info* hints);
/// Every info of fi_getinfo's answer lowered to the caps; what changed is logged as a limits
/// fault, each attribute as [the provider's largest, the value shown].
void cap_infos(fi_info* infos);
/// -FI_EINVAL, logged, for an endpoint asked above a cap; 0 when it fits.
int refuse_endpoint(const fi_info* info);
/// Logs, once, the caps of the plan a libfabric program has no attribute for.
void note_caps_not_applied();

}  // namespace faultline::transports::interpose
