#pragma once

#include <rdma/fi_domain.h>

namespace faultline::transports::interpose {

/// Wraps an endpoint just opened on a domain of provider `layer` (a string that outlives it):
/// its message and tagged posts count for fail_post rules, and its receive buffers are recorded
/// for data rules. Left untouched when the plan has neither.
void wrap_endpoint(fid_ep* ep, const char* layer);

/// The recorded-receive queue of a layer (receives are keyed by layer and op_context).
uint64_t receive_queue_of_layer(const char* layer);

/// This thread's depth in wrapped posts: a utility provider posts to its core inside the
/// program's post, and a rule without a layer counts only the outermost.
int post_depth();

}  // namespace faultline::transports::interpose
