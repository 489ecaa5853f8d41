#pragma once

namespace faultline::harness {

/// Process exit codes of every faultline command (README.md, "Exit codes").
enum ExitCode : int {
  kExitPass = 0,                ///< everything ran and passed
  kExitConformanceFailure = 1,  ///< a scenario failed its expectation
  kExitUsage = 2,               ///< a usage or configuration error; nothing (more) ran
  kExitHarnessError = 3,        ///< faultline itself broke
  kExitIncomplete = 4,          ///< it ran, but did not check all it was asked to: port-check of a
                                ///< program that asked for nothing, a sweep its budget cut short
  kExitUnknown = 5,  ///< port-check: a target's limit the program reached is not known (the
                     ///< profile lacks it, or knows it only from below): no one can say
};

}  // namespace faultline::harness
