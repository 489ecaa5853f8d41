#pragma once

#include <optional>
#include <string_view>

namespace faultline::harness {

/// The outcome of one scenario run (DESIGN.md, "Scenarios").
enum class Verdict {
  kPass,     ///< everything expected happened
  kFail,     ///< expected X, got Y
  kSkip,     ///< not supported here, with the reason
  kXfail,    ///< a known failure listed in an exclude file
  kTimeout,  ///< a deadline passed
  kCrashed,  ///< the scenario process died of a signal
  kError,    ///< the harness itself broke (an agent lost, a bad message)
};

std::string_view to_string(Verdict verdict);
std::optional<Verdict> verdict_from_string(std::string_view name);

/// Pass, skip and xfail do not fail a run.
bool is_success(Verdict verdict);

}  // namespace faultline::harness
