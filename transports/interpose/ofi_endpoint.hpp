#pragma once

#include <rdma/fi_domain.h>

namespace faultline::transports::interpose {

/// Wraps an endpoint just opened with `info` on a domain of provider `layer` (a string that
/// outlives it; `programs_own`: the program opened it, not a provider beneath): its message
/// and tagged posts count for fail_post rules, get the segment_count and inline faults, and
/// its receive buffers are recorded for data rules (the tables are taken again after its
/// enable: a provider may install others then). Its control calls are marked as provider
/// calls, so what a utility provider opens inside them is known as its own. Left untouched
/// when the plan is empty.
void wrap_endpoint(fid_ep* ep, const fi_info* info, const char* layer, bool programs_own);

/// The recorded-receive queue of a layer (receives are keyed by layer and op_context).
uint64_t receive_queue_of_layer(const char* layer);

}  // namespace faultline::transports::interpose
