#pragma once

#include <string>

namespace faultline::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  ///< standard output
  std::string err;  ///< standard error
};

/// Runs `command` through /bin/sh and collects its exit code, stdout and stderr.
CommandResult run_command(const std::string& command);

}  // namespace faultline::testing
