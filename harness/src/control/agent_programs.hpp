#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "faultline/harness/control/program_jobs.hpp"

namespace faultline::harness {

/// The roles of program jobs an agent runs for its coordinator (`run_program`), each started by
/// the agent's JobLauncher in a folder of its own under a private one (mode 0700) of this
/// agent; the coordinator gets each role's summary (`program_result`) when its process ends.
class AgentPrograms {
 public:
  /// Called from a waiter thread when a role's process has ended.
  using Ended = std::function<void(uint64_t run_id, const std::string& role)>;

  /// `launcher`: none, and every role is refused.
  AgentPrograms(std::shared_ptr<JobLauncher> launcher, std::string agent_id, Ended ended);
  /// Stops every role still running (SIGTERM, as at its deadline) and waits for them.
  ~AgentPrograms();
  AgentPrograms(const AgentPrograms&) = delete;
  AgentPrograms& operator=(const AgentPrograms&) = delete;

  /// Starts the role a `run_program` message describes. `local_address`: this host's address
  /// on the coordinator's network, the address a first role gives its peers. Returns the
  /// message to send: `program_started` with the port and address used, or `program_result`
  /// with an error summary when it could not start.
  std::pair<std::string, nlohmann::json> start(const nlohmann::json& message,
                                               const std::string& local_address);
  /// The `program_result` of a role that ended.
  nlohmann::json finish(uint64_t run_id, const std::string& role);
  /// Stops the run's roles still running (SIGTERM).
  void stop_run(uint64_t run_id);

 private:
  struct Program;
  /// This agent's private folder, made on first use.
  Result<std::string> work_dir();

  std::shared_ptr<JobLauncher> launcher_;
  std::string agent_id_;
  std::string work_dir_;
  Ended ended_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Program>> programs_;
};

}  // namespace faultline::harness
