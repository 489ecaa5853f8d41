#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "faultline/harness/base/scenario_spec.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"

namespace faultline::cli {

/// The options that choose what runs (`run` and `coordinator` share them): a suite or
/// scenario ids/globs/files, exclude files, --strict, --seed, --scenario-dir.
struct ScenarioSelection {
  std::string suite = "smoke";
  std::vector<std::string> names;
  std::string scenario_dir;
  std::vector<std::string> exclude_files;
  bool strict = false;
  std::optional<uint64_t> seed;

  void add_to(CLI::App* command);
  /// The scenarios to run, each with the exclude entries that name it (applied per run, for
  /// the targets of the agents that run it). Every problem (a bad file,
  /// an unknown suite or id) is printed to stderr as "faultline COMMAND: FILE: POINTER:
  /// expected ..."; then nullopt, and the caller exits 2 before anything runs.
  std::optional<std::vector<harness::ScenarioSpec>> resolve(const std::string& command) const;
  /// `--suite sut`: the programs of scenarios/sut/ under the interposers (harness/sut), not
  /// faultline's engines.
  bool is_sut_suite() const { return names.empty() && suite == "sut"; }
  /// The sut/ folder of the scenario directory.
  std::string sut_dir() const;
  /// --seed, or a fresh random seed (printed and recorded, so the run can be replayed).
  uint64_t seed_or_random() const;
};

}  // namespace faultline::cli
