#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "support/background_process.hpp"

// Where the harness integration tests find the faultline binary and their scenario files
// (defined for the target in tests/harness/CMakeLists.txt).
inline const std::string kFaultline = FAULTLINE_BINARY;
inline const std::string kData = FAULTLINE_TEST_DATA_DIR;

/// The report.json a run wrote into `dir`, parsed.
inline nlohmann::json report_in(const std::string& dir) {
  return nlohmann::json::parse(faultline::testing::read_text_file(dir + "/report.json"));
}
