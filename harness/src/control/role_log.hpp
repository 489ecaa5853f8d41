#pragma once

// What an agent and a coordinator say on stderr, each line named by who says it.

#include <string>

#include "faultline/harness/base/live_line.hpp"

namespace faultline::harness {

inline void agent_log(const std::string& text) { write_error_line("faultline agent: " + text); }

inline void coordinator_log(const std::string& text) {
  write_error_line("faultline coordinator: " + text);
}

}  // namespace faultline::harness
