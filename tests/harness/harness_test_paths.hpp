#pragma once

#include <string>

// Where the harness integration tests find the faultline binary and their scenario files
// (defined for the target in tests/harness/CMakeLists.txt).
inline const std::string kFaultline = FAULTLINE_BINARY;
inline const std::string kData = FAULTLINE_TEST_DATA_DIR;
