#pragma once

#include <sys/types.h>

#include <string>

namespace faultline::harness::sut {

/// Where each thread of `pid` is now, read from /proc without stopping it: for each thread a
/// "Thread" line and one frame, its program counter as OBJECT+0xOFFSET with the system call
/// it waits in. What a hang's report shows when gdb could not take the full stacks in time
/// (a loaded host): one frame, but always one.
std::string proc_stacks(pid_t pid);

}  // namespace faultline::harness::sut
