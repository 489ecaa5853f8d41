#pragma once

#include <string>

namespace faultline::harness {

/// The path of this process's executable (/proc/self/exe), or "faultline" if it cannot be read:
/// what agents, scenario children and SUT roles are started with.
std::string own_executable();

}  // namespace faultline::harness
