#pragma once

#include <string>

namespace faultline::harness {

/// The path of this process's executable (/proc/self/exe), or "faultline" if it cannot be read:
/// what agents, scenario children and SUT roles are started with.
std::string own_executable();

/// Asks the program this process runs under faults to stop now (its stacks are taken, its
/// verdict reported): async-signal-safe, for a SIGTERM handler.
void request_stop();
/// Whether request_stop was called.
bool stop_requested();

/// SIGTERM, SIGINT and SIGHUP call request_stop (and are remembered), without SA_RESTART: a
/// wait they interrupt returns EINTR, so its caller sees the request at once.
void stop_on_signals();
/// The signal that asked to stop ("SIGTERM"), or "" when none did.
std::string stop_signal_name();

}  // namespace faultline::harness
