#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace faultline::harness {

/// The outcome of one scenario run (scenarios/README.md, "Verdicts").
enum class Verdict {
  kPass,     ///< everything expected happened
  kFail,     ///< expected X, got Y
  kSkip,     ///< not supported here, with the reason
  kXfail,    ///< a known failure listed in an exclude file
  kTimeout,  ///< a deadline passed
  kCrashed,  ///< the scenario process died of a signal
  kError,    ///< the harness itself broke (an agent lost, a bad message)
};

/// Every value of Verdict, in declaration order.
inline constexpr Verdict kAllVerdicts[] = {Verdict::kPass,  Verdict::kFail,    Verdict::kSkip,
                                           Verdict::kXfail, Verdict::kTimeout, Verdict::kCrashed,
                                           Verdict::kError};

std::string_view to_string(Verdict verdict);
std::optional<Verdict> verdict_from_string(std::string_view name);

/// Pass, skip and xfail do not fail a run.
bool is_success(Verdict verdict);

/// Which side's verdict speaks for a run: the most specific failure (crashed, then fail,
/// error, timeout, skip, xfail, pass) has the highest severity.
int severity(Verdict verdict);

/// What a run's verdict becomes under the suite's rules, and the text that says why.
struct SettledVerdict {
  Verdict verdict = Verdict::kPass;
  std::string expected;  ///< replaces the run's `expected` when not empty
  std::string observed;  ///< replaces the run's `observed` when not empty
  std::string evidence;  ///< replaces the run's `evidence` when not empty
};

/// A known failure listed in an exclude file (`exclude_reason`) is xfail; under `strict` a
/// skip fails. `observed` and `evidence` are the run's own, to be prefixed with the reason.
SettledVerdict settle_verdict(Verdict verdict, const std::string& exclude_reason, bool strict,
                              const std::string& observed, const std::string& evidence);

}  // namespace faultline::harness
