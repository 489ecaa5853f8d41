#include "faultline/harness/verdict.hpp"

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
  for (Verdict verdict : {Verdict::kPass, Verdict::kFail, Verdict::kSkip, Verdict::kXfail,
                          Verdict::kTimeout, Verdict::kCrashed, Verdict::kError}) {
    if (to_string(verdict) == name) return verdict;
  }
  return std::nullopt;
}

bool is_success(Verdict verdict) {
  return verdict == Verdict::kPass || verdict == Verdict::kSkip || verdict == Verdict::kXfail;
}

}  // namespace faultline::harness
