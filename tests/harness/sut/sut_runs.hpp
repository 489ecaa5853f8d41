#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/background_process.hpp"
#include "support/run_command.hpp"

namespace faultline::testing {

/// One `faultline sut exec` and the sut.json it wrote.
struct SutRun {
  CommandResult command;  ///< `out` holds both streams, as a person sees them
  nlohmann::json report;

  /// The interposers' events of one kind ("fault", "instrumented", ...).
  std::vector<nlohmann::json> events(const std::string& kind) const;
  /// Every output line of the program, joined.
  std::string output() const;
};

/// What tests/sut/ofi_sum.c prints when every byte of its 32 messages of `bytes` arrived: the
/// sum of (m * 7 + b + 1) mod 256 over message m and byte b ("sum=N").
std::string ofi_sum_line(int bytes = 1024);

/// `faultline sut exec --report-dir DIR ARGUMENTS`.
SutRun sut_exec(const std::string& dir, const std::string& arguments);

}  // namespace faultline::testing
