#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace faultline::harness {

/// The roles of SUT scenarios an agent runs for its coordinator (`run_program`), each under
/// `faultline sut exec` in a folder of its own, judged there; the coordinator gets each
/// role's summary (`program_result`) when it ends.
class AgentPrograms {
 public:
  /// Called from a waiter thread when a role's `sut exec` has ended.
  using Ended = std::function<void(uint64_t run_id, const std::string& role)>;

  AgentPrograms(std::string executable, std::string agent_id, Ended ended);
  /// Stops every role still running (as at its deadline: stacks taken) and waits for them.
  ~AgentPrograms();
  AgentPrograms(const AgentPrograms&) = delete;
  AgentPrograms& operator=(const AgentPrograms&) = delete;

  /// Starts the role a `run_program` message describes. `local_address`: this host's address
  /// on the coordinator's network, the `{address}` a first role gives its peers. Returns the
  /// message to send: `program_started` with the placeholder values used, or
  /// `program_result` with an error summary when it could not start.
  std::pair<std::string, nlohmann::json> start(const nlohmann::json& message,
                                               const std::string& local_address);
  /// The `program_result` of a role that ended.
  nlohmann::json finish(uint64_t run_id, const std::string& role);
  /// Stops the run's roles still running (SIGTERM: `sut exec` takes their stacks).
  void stop_run(uint64_t run_id);

 private:
  struct Program;
  std::string executable_;
  std::string agent_id_;
  std::string work_dir_;
  Ended ended_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Program>> programs_;
};

}  // namespace faultline::harness
