#pragma once

// The checker's patterns (ok, wrong, error) over a program's output, line by line as it
// arrives: RE2, so a pattern runs in time linear in the line and bounded stack, and a pattern
// that does not compile is refused before the program runs.
#include <re2/re2.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/sut/sut_exec.hpp"
#include "output_reader.hpp"

namespace faultline::harness::sut {

class OutputChecker {
 public:
  /// The checker's patterns compiled; an error naming the option and RE2's reason for one that
  /// does not compile. An empty error pattern looks for error words (error, fail, abort, fatal,
  /// invalid, any case).
  static Result<OutputChecker> compile(const Checker& checker);

  /// Looks at one line of the output.
  void watch(const OutputLine& line);

  bool ok_seen() const { return ok_seen_; }
  bool wrong_seen() const { return wrong_seen_; }
  bool has_ok_pattern() const { return ok_ != nullptr; }
  /// The first line that says an error was seen, at or after `since_ms` (5 ms of slack for the
  /// clocks of the program and the fault log).
  std::optional<OutputLine> first_error_since(int64_t since_ms) const;

 private:
  std::shared_ptr<const RE2> ok_;
  std::shared_ptr<const RE2> wrong_;
  std::shared_ptr<const RE2> error_;
  bool ok_seen_ = false;
  bool wrong_seen_ = false;
  std::vector<OutputLine> error_lines_;  ///< the first kErrorLinesKept
};

}  // namespace faultline::harness::sut
