#pragma once

namespace faultline::transports::interpose {

/// Runs `hook` once when the process ends: at `exit` (atexit), and also at `_exit` and `_Exit`,
/// which this library defines so that what it writes at the end (a sweep's map of call sites,
/// the most objects held) is not lost by a program that leaves without exit's handlers
/// (StepMesh's program leaves a hung Finalize with `_Exit`). Only in the process that
/// registered it: a forked child's exit writes nothing of its parent's.
void at_process_exit(void (*hook)());

}  // namespace faultline::transports::interpose

extern "C" void faultline_interpose_at_exit(void (*hook)());
