#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "faultline/harness/control/coordinator.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"

namespace faultline::harness {

/// What a run records about itself in the report.
struct RunMetadata {
  std::string suite;
  transports::Target target;
  uint64_t seed = 0;
  bool strict = false;
};

/// Now, as reports write times: "2026-11-25T03:10:00Z".
std::string utc_now();

/// This machine as the report's one agent ("local"), for runs without a coordinator
/// (`sut run`, `port-check`).
nlohmann::json this_machine_as_agent(const transports::Target& target);

/// One finished scenario run as the report holds it.
nlohmann::json scenario_to_json(const ScenarioRun& run);

/// The report document of a run (reports/schema/report.schema.json): the run (version, host,
/// kernel, target, seed, every agent with its devices and their limits), the summary and the
/// scenario runs so far.
class ReportDocument {
 public:
  ReportDocument(const Coordinator& coordinator, const RunMetadata& metadata, size_t total);
  /// `agents`: the run's agents as the schema's `run.agents` holds them.
  ReportDocument(nlohmann::json agents, const RunMetadata& metadata, size_t total);
  /// Adds a finished run and refreshes the summary, the update time and `complete`.
  const nlohmann::json& add(const ScenarioRun& run);
  /// The same for a scenario already in the schema's form (a SUT scenario's).
  const nlohmann::json& add(nlohmann::json scenario);
  const nlohmann::json& json() const { return document_; }
  /// Sets a section of its own kind beside the scenarios (`sweep`), replacing one of that name.
  void set_section(const std::string& name, nlohmann::json section) {
    document_[name] = std::move(section);
  }
  /// Marks a run that ended before its first scenario, and why.
  void set_not_run(const std::string& why) { document_["run"]["not_run"] = why; }

 private:
  void refresh();
  size_t total_;
  std::map<std::string, int> verdict_counts_;  // of the scenarios so far, kept as they come
  nlohmann::json document_;
};

}  // namespace faultline::harness
