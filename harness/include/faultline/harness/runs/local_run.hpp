#pragma once

#include <sys/types.h>

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "faultline/harness/base/scenario_spec.hpp"
#include "faultline/harness/control/coordinator.hpp"
#include "faultline/harness/runs/report_document.hpp"
#include "faultline/reports/metrics.hpp"

namespace faultline::harness {

/// How to gather agents on this machine: a coordinator and agent processes (this binary
/// again) on a target, as `faultline run` and `faultline diagnose` do it.
struct LocalRun {
  CoordinatorOptions options;  ///< agents and (unless set) listen and token are filled in
  size_t agents = 2;           ///< local agent processes
  /// Agents that join from elsewhere (`diagnose --peer`): the coordinator listens on
  /// `options.listen` and waits for them too; they need `options.token`.
  size_t remote_agents = 0;
  std::chrono::seconds join_timeout{30};
};

/// A coordinator with its agents joined, serving suite runs until destroyed (then the agents
/// are told to shut down, and any that does not exit within 5 s is killed).
class LocalAgents {
 public:
  /// Listens, starts the local agents and waits for every agent to join; an error names what
  /// failed (the address, how many joined).
  static Result<std::unique_ptr<LocalAgents>> start(LocalRun run, const transports::Target& target);
  ~LocalAgents();
  LocalAgents(const LocalAgents&) = delete;
  LocalAgents& operator=(const LocalAgents&) = delete;

  /// run_suite on these agents: progress and the summary table to `out`, the report files to
  /// `report_dir`, every finished run counted in `metrics` when given. Returns its exit code.
  int run(const std::vector<ScenarioSpec>& scenarios, const std::string& report_dir,
          const RunMetadata& metadata, std::ostream& out, reports::Metrics* metrics);

 private:
  explicit LocalAgents(const CoordinatorOptions& options) : coordinator_(options) {}
  Coordinator coordinator_;
  std::vector<pid_t> children_;
};

}  // namespace faultline::harness
