#pragma once

#include <string>

namespace faultline::testing {

/// Catch2 2.13 has no SKIP(). A test that cannot run here calls FAULTLINE_SKIP with the
/// reason; the test main then exits with kSkipExitCode, which CTest reports as "Skipped".
inline constexpr int kSkipExitCode = 77;  // the automake convention; failures exit 1

void mark_skipped(std::string reason);
/// The reasons recorded so far, empty when nothing was skipped.
const std::string& skip_reasons();

}  // namespace faultline::testing

#define FAULTLINE_SKIP(reason)                  \
  do {                                          \
    ::faultline::testing::mark_skipped(reason); \
    return;                                     \
  } while (false)
