#pragma once

namespace faultline::transports {

/// Debian's libfabric links libpsm2 and libpsm_infinipath, whose load-time constructors take
/// over SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT and SIGTERM in every process that links
/// libfabric: they print a backtrace, drop a `.btr` file into the working directory and
/// exit(1). A crash would then look like an ordinary exit, and SIGTERM would run exit
/// handlers under running threads. Call this first thing in main() to give those signals
/// their default actions back. HFI_NO_BACKTRACE cannot do it: the constructors run before
/// main() could set it.
void restore_default_signal_actions();

}  // namespace faultline::transports
