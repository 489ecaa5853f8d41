#pragma once

// Whether a program is stuck for good: every thread of every process of it asleep in the kernel
// on something with no timeout, as /proc/PID/task/TID/{stat,syscall} say. A thread that runs
// (a busy poll), or that waits with a timeout (a sleep, a timed condition wait, a poll with a
// timeout: a program's own error timer), may yet move on by itself.
#include <sys/types.h>

#include <string>
#include <vector>

namespace faultline::harness::sut {

/// One thread's wait, from its /proc `stat` state letter and its `syscall` line ("202 0x7f..
/// 0x80 0x0 0x0 ..." or "running"): true when it sleeps in a system call without a timeout.
bool waits_without_timeout(char state, const std::string& syscall_line);

/// True when every thread of every process in `pids` waits without a timeout (and there is
/// one at least); a process or thread that went away meanwhile is left out.
bool every_thread_waits_without_timeout(const std::vector<pid_t>& pids);

}  // namespace faultline::harness::sut
