#include "scenario_selection.hpp"

#include <iostream>
#include <random>

#include "faultline/harness/scenario/scenario_catalog.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

void ScenarioSelection::add_to(CLI::App* command) {
  command
      ->add_option("--suite", suite,
                   "Suite to run (a file of scenarios/suites/, or sut: scenarios/sut/)")
      ->capture_default_str();
  command->add_option("scenarios", names,
                      "Scenario ids, globs (\"inline.*\") or scenario files, instead of a suite");
  command->add_option("--scenario-dir", scenario_dir,
                      "Scenario directory (default $FAULTLINE_SCENARIO_DIR, else the source "
                      "tree's scenarios/)");
  command->add_option("--exclude", exclude_files,
                      "Exclude file of known failures (their failures become xfail)");
  command->add_flag("--strict", strict, "A skipped scenario fails the run");
  command->add_option("--seed", seed, "Seed of every injected fault (default: random, printed)")
      ->check(whole_number());
}

std::optional<std::vector<harness::ScenarioSpec>> ScenarioSelection::resolve(
    const std::string& command) const {
  std::vector<harness::LoadProblem> problems;
  const auto catalog = harness::ScenarioCatalog::load(
      scenario_dir.empty() ? harness::default_scenario_dir() : scenario_dir, problems);
  std::vector<harness::ExcludeEntry> excludes;
  auto chosen = catalog.resolve(suite, names, excludes, problems);
  for (const auto& file : exclude_files) {
    auto entries = harness::load_exclude_file(file, problems);
    excludes.insert(excludes.end(), entries.begin(), entries.end());
  }
  if (!problems.empty()) {
    for (const auto& problem : problems)
      std::cerr << "faultline " << command << ": " << problem.describe() << "\n";
    std::cerr << "faultline " << command << ": " << problems.size()
              << " problem(s) in the scenarios; nothing ran\n";
    return std::nullopt;
  }
  harness::apply_excludes(chosen, excludes);
  return chosen;
}

std::string ScenarioSelection::sut_dir() const {
  return (scenario_dir.empty() ? harness::default_scenario_dir() : scenario_dir) + "/sut";
}

uint64_t ScenarioSelection::seed_or_random() const {
  if (seed) return *seed;
  std::random_device random;
  return (static_cast<uint64_t>(random()) << 32) | random();
}

}  // namespace faultline::cli
