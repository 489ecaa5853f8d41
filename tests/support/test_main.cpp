#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>

#include "support/skip.hpp"

int main(int argc, char** argv) {
  const int failures = Catch::Session().run(argc, argv);
  const std::string& skipped = faultline::testing::skip_reasons();
  if (failures == 0 && !skipped.empty()) {
    std::cout << "SKIPPED: " << skipped << "\n";
    return faultline::testing::kSkipExitCode;
  }
  return failures;
}
