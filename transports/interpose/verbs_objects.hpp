#pragma once

#include <infiniband/verbs.h>

namespace faultline::transports::interpose {

/// The objects a device holds a number of (its max_qp, max_cq, max_mr, max_pd, max_srq).
enum class VerbsObject { kQp, kCq, kMr, kPd, kSrq };

/// The target's errno, logged, when one more `object` than the plan's count would be held at
/// once (as a device refuses one more than it has); 0 otherwise. The count is the process's:
/// each of a program's processes is held to it.
int refuse_one_more(VerbsObject object, const char* call, ibv_context* context);
/// One more `object` is held (its create succeeded). Under observe, a new most held at once is
/// logged as a request (each up to 16, then at each power of two, and the exact most at exit).
void note_created(VerbsObject object, const char* call, ibv_context* context);
/// One fewer is held (its destroy succeeded).
void note_destroyed(VerbsObject object);

}  // namespace faultline::transports::interpose
