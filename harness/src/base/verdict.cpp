#include "faultline/harness/base/verdict.hpp"

namespace faultline::harness {

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass: return "pass";
    case Verdict::kFail: return "fail";
    case Verdict::kSkip: return "skip";
    case Verdict::kXfail: return "xfail";
    case Verdict::kTimeout: return "timeout";
    case Verdict::kCrashed: return "crashed";
    case Verdict::kError: return "error";
  }
  return "error";
}

std::optional<Verdict> verdict_from_string(std::string_view name) {
  for (Verdict verdict : kAllVerdicts) {
    if (to_string(verdict) == name) return verdict;
  }
  return std::nullopt;
}

bool is_success(Verdict verdict) {
  return verdict == Verdict::kPass || verdict == Verdict::kSkip || verdict == Verdict::kXfail;
}

int severity(Verdict verdict) {
  switch (verdict) {
    case Verdict::kCrashed: return 6;
    case Verdict::kFail: return 5;
    case Verdict::kError: return 4;
    case Verdict::kTimeout: return 3;
    case Verdict::kSkip: return 2;
    case Verdict::kXfail: return 1;
    case Verdict::kPass: return 0;
  }
  return 4;
}

SettledVerdict settle_verdict(Verdict verdict, const std::string& exclude_reason, bool strict,
                              const std::string& observed, const std::string& evidence) {
  const bool failed =
      verdict == Verdict::kFail || verdict == Verdict::kTimeout || verdict == Verdict::kCrashed;
  if (failed && !exclude_reason.empty()) {
    return {Verdict::kXfail, "", "",
            "known failure (" + std::string(to_string(verdict)) + "), excluded: " + exclude_reason +
                "; " + evidence};
  }
  if (verdict == Verdict::kSkip && strict) {
    return {Verdict::kFail, "the scenario runs (--strict)", "skipped under --strict: " + observed,
            ""};
  }
  return {verdict, "", "", ""};
}

}  // namespace faultline::harness
