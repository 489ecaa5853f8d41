#pragma once

#include <string>

namespace faultline::harness::sut {

/// What a hung program waits on, read from the stacks of its processes (gdb's frames, or the
/// system call /proc names): "an rdma_cm event (rdma_get_cm_event)", "a completion event
/// (ibv_get_cq_event)", "a lock or condition variable (futex)"; the first a thread of it is
/// found in, by how telling it is; "" when none is recognised.
std::string hang_waits_on(const std::string& stacks);

}  // namespace faultline::harness::sut
