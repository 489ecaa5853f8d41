#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>

#include "support/skip.hpp"

int main(int argc, char** argv) {
  // Catch2 returns the number of failed assertions; any count must read as a failure, never
  // as the skip code.
  const int failures = Catch::Session().run(argc, argv);
  if (failures != 0) return 1;
  const std::string& skipped = faultline::testing::skip_reasons();
  if (!skipped.empty()) {
    std::cout << "SKIPPED: " << skipped << "\n";
    return faultline::testing::kSkipExitCode;
  }
  return 0;
}
