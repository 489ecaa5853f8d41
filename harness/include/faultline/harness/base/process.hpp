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

}  // namespace faultline::harness
