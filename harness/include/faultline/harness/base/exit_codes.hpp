#pragma once

namespace faultline::harness {

/// Process exit codes of every faultline command (README.md, "Exit codes").
enum ExitCode : int {
  kExitPass = 0,                ///< everything ran and passed
  kExitConformanceFailure = 1,  ///< a scenario failed its expectation
  kExitUsage = 2,               ///< a usage or configuration error; nothing (more) ran
  kExitHarnessError = 3,        ///< faultline itself broke
  kExitNothingChecked = 4,      ///< it ran, but checked nothing: no claim either way
};

}  // namespace faultline::harness
