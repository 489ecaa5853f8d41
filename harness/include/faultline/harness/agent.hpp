#pragma once

#include <chrono>
#include <string>

#include "faultline/harness/builtin_scenarios.hpp"

namespace faultline::harness {

struct AgentOptions {
  std::string coordinator;  ///< HOST:PORT
  std::string token;
  ScenarioTarget target;
  /// How long to keep trying to reach the coordinator (exponential backoff from 100 ms).
  std::chrono::milliseconds connect_budget = std::chrono::seconds(10);
  /// The faultline binary, re-executed as `scenario-child` for every scenario.
  std::string executable;
};

/// Runs an agent: connects (with bounded retries), authenticates, reports its host and
/// devices, and runs each assigned scenario in a child process until the coordinator says
/// shutdown. Returns the process exit code (0 after shutdown, 2 when the coordinator cannot
/// be reached or refuses the token, 3 when the coordinator is lost). Messages go to stderr.
int run_agent(const AgentOptions& options);

}  // namespace faultline::harness
