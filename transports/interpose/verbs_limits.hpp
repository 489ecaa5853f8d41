#pragma once

#include <infiniband/verbs.h>

namespace faultline::transports::interpose {

/// EINVAL, the refusal logged, when a QP's `cap` asks more than the plan's limits allow (as a
/// device refuses a create above its own limits); 0 when it fits.
int refuse_qp_caps(const ibv_qp_cap& cap, const char* call, ibv_context* context);
/// What the program is told it was granted: no more than the caps.
void clamp_qp_caps(ibv_qp_cap& cap);
/// EINVAL, logged, for a CQ larger than `max_cqe`; 0 when it fits.
int refuse_cq_size(int cqe, const char* call, ibv_context* context);
/// The device the program queries (through `call`) is the smaller one; what was lowered is
/// logged as a limits fault, each field as [the device's value, the value shown].
void clamp_device_attr(ibv_device_attr& attr, const char* call);

}  // namespace faultline::transports::interpose
