#pragma once

#include <string>
#include <vector>

#include "faultline/harness/base/scenario_spec.hpp"

namespace faultline::harness {

/// One thing wrong with a scenario file: which file, where in it (a JSON pointer), and what
/// was expected there.
struct LoadProblem {
  std::string file;
  std::string pointer;  ///< "/steps/2/op"; "" for the whole document
  std::string expected;
  std::string describe() const;  ///< "FILE: /steps/2/op: expected ..."
};

/// Where device profiles live, for `limits` faults that name a `profile`.
struct LoaderOptions {
  std::string devices_dir;
  /// The most memory one role of a scenario may ask for (buffers, kv values, tagged messages,
  /// collective vectors): $FAULTLINE_MAX_SCENARIO_MEMORY (bytes, or with K, M or G), else 8 GiB.
  uint64_t max_memory_bytes = default_max_scenario_memory();
  static uint64_t default_max_scenario_memory();
};

/// Loads one scenario file: JSON, then the schema (scenarios/schema/scenario.schema.json,
/// compiled in), then what a schema cannot say (roles and buffers that exist, ops that are
/// registered, profiles that exist). Every problem is appended to `problems`; the scenario is
/// returned only when there are none. A `limits` fault naming a profile gets the profile's
/// limits merged in, so agents need no files.
std::optional<ScenarioSpec> load_scenario_file(const std::string& path,
                                               const LoaderOptions& options,
                                               std::vector<LoadProblem>& problems);

/// The same for a document already in memory (tests, fuzzing); `name` stands for the file.
std::optional<ScenarioSpec> load_scenario_text(const std::string& name, const std::string& text,
                                               const LoaderOptions& options,
                                               std::vector<LoadProblem>& problems);

/// Where a scenario document breaks the schema, one "pointer: expected ..." line per field:
/// a scenario child checks the document its coordinator sent before running any of it.
std::vector<std::string> scenario_schema_problems(const nlohmann::json& document);

}  // namespace faultline::harness
