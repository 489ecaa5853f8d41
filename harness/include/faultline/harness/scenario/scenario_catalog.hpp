#pragma once

#include "faultline/harness/base/install_paths.hpp"

#include <string>
#include <vector>

#include "faultline/harness/base/scenario_spec.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"
#include "faultline/harness/scenario/scenario_loader.hpp"

namespace faultline::harness {

/// One entry of an exclude file: a known failure on some target, with its reason.
struct ExcludeEntry {
  std::string scenario;   ///< id or glob
  std::string transport;  ///< empty: any
  std::string provider;   ///< empty: any
  std::string reason;
};

/// Every scenario file under a scenario directory (not schema/, suites/, devices/, excludes/),
/// the built-in scenarios, and the suites that list them.
/// The scenario files under `scenario_dir`, sorted (not its schemas, suites, device profiles,
/// excludes or sut programs).
std::vector<std::string> scenario_files_under(const std::string& scenario_dir);

class ScenarioCatalog {
 public:
  /// Loads every scenario file; each bad file adds its problems (nothing should run then).
  static ScenarioCatalog load(const std::string& scenario_dir, std::vector<LoadProblem>& problems);

  const std::vector<ScenarioSpec>& scenarios() const { return scenarios_; }
  /// Suite names (the files of suites/), sorted.
  std::vector<std::string> suite_names() const;
  const std::string& directory() const { return directory_; }
  LoaderOptions loader_options() const { return {directory_ + "/devices"}; }

  /// What to run: `names` (scenario ids, globs, or paths of scenario files) when given, else
  /// the suite. Unknown names, suites and bad files are problems. Also collects the exclude
  /// files the suite names into `excludes`.
  std::vector<ScenarioSpec> resolve(const std::string& suite, const std::vector<std::string>& names,
                                    std::vector<ExcludeEntry>& excludes,
                                    std::vector<LoadProblem>& problems) const;

 private:
  std::string directory_;
  std::vector<ScenarioSpec> scenarios_;
};

/// The entries of an exclude file; problems name the file and the pointer.
std::vector<ExcludeEntry> load_exclude_file(const std::string& path,
                                            std::vector<LoadProblem>& problems);

/// Gives each scenario the entries that name it (by id or glob) as its known failures; which
/// apply is decided per run, from the targets of the agents that run it.
void apply_excludes(std::vector<ScenarioSpec>& scenarios,
                    const std::vector<ExcludeEntry>& excludes);

/// A built-in scenario as a ScenarioSpec.
ScenarioSpec spec_of(const BuiltinScenario& scenario);

}  // namespace faultline::harness
