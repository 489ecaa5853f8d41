#pragma once

// What an agent and a coordinator say on stderr, each line named by who says it.

#include <iostream>
#include <string>

namespace faultline::harness {

inline void agent_log(const std::string& text) {
  std::cerr << "faultline agent: " << text << std::endl;
}

inline void coordinator_log(const std::string& text) {
  std::cerr << "faultline coordinator: " << text << std::endl;
}

}  // namespace faultline::harness
