#include "output_checker.hpp"

#include "faultline/core/printable_text.hpp"

namespace faultline::harness::sut {

namespace {

// The lines a program says an error with, when the checker gives none: words of an error, and
// a request that timed out (StepMesh's `request timeout 10000ms` on a lost completion).
constexpr const char* kDefaultErrorPattern =
    "error|fail|abort|fatal|invalid|request timeout|timed out";

// Error lines remembered for `first_error_since`: the fault's time is known only once the run
// ended, so the earliest ones are kept, each cut short.
constexpr size_t kErrorLinesKept = 1000;
constexpr size_t kErrorLineLength = 1024;

Result<std::shared_ptr<const RE2>> compiled(const std::string& pattern, const char* option,
                                            bool ignore_case = false) {
  if (pattern.empty()) return std::shared_ptr<const RE2>();
  RE2::Options options;
  options.set_log_errors(false);
  options.set_case_sensitive(!ignore_case);
  auto regex = std::make_shared<const RE2>(pattern, options);
  if (!regex->ok()) {
    return Error{ErrorCode::kInvalidArgument, std::string(option) + " '" + pattern +
                                                  "' is not a regular expression RE2 " +
                                                  "takes: " + regex->error()};
  }
  return std::shared_ptr<const RE2>(std::move(regex));
}

// A shell's report that its child aborted (dash: "Aborted (core dumped)"; bash: "bash: line 1:
// 1880 Aborted  cmd"): the program's own error line is the one to quote, not this.
bool shell_abort_report(const std::string& line) {
  static const RE2 report(R"(^(\S+: )?(line \d+: )?\s*(\d+\s+)?Aborted( |$))");
  return RE2::PartialMatch(line, report);
}

}  // namespace

Result<OutputChecker> OutputChecker::compile(const Checker& checker) {
  OutputChecker compiled_checker;
  auto ok = compiled(checker.ok, "--ok");
  auto wrong = compiled(checker.wrong, "--wrong");
  auto error = checker.error.empty() ? compiled(kDefaultErrorPattern, "--error", true)
                                     : compiled(checker.error, "--error");
  for (auto* each : {&ok, &wrong, &error})
    if (!each->ok()) return std::move(*each).take_error();
  compiled_checker.ok_ = std::move(ok).value();
  compiled_checker.wrong_ = std::move(wrong).value();
  compiled_checker.error_ = std::move(error).value();
  return compiled_checker;
}

void OutputChecker::watch(const OutputLine& line) {
  ok_seen_ = ok_seen_ || (ok_ && RE2::PartialMatch(line.text, *ok_));
  wrong_seen_ = wrong_seen_ || (wrong_ && RE2::PartialMatch(line.text, *wrong_));
  if (error_lines_.size() < kErrorLinesKept && RE2::PartialMatch(line.text, *error_) &&
      !shell_abort_report(line.text))
    error_lines_.push_back({line.wall_ms, valid_utf8(line.text.substr(0, kErrorLineLength))});
}

std::optional<OutputLine> OutputChecker::first_error_since(int64_t since_ms) const {
  for (const auto& line : error_lines_)
    if (line.wall_ms + 5 >= since_ms) return line;
  return std::nullopt;
}

}  // namespace faultline::harness::sut
