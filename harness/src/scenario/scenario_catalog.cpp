#include "faultline/harness/scenario/scenario_catalog.hpp"

#include "faultline/core/closest_names.hpp"
#include "faultline/harness/base/install_paths.hpp"
#include "faultline/harness/base/strict_json.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace faultline::harness {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool matches(const std::string& pattern, const std::string& id) {
  return fnmatch(pattern.c_str(), id.c_str(), 0) == 0;
}

bool looks_like_file(const std::string& name) {
  return name.find('/') != std::string::npos ||
         (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0);
}

std::optional<json> read_json(const std::string& path, std::vector<LoadProblem>& problems) {
  auto document = read_json_file(path);
  if (!document.ok()) {
    const std::string& why = document.error().message;
    problems.push_back(
        {path, "", "a JSON object in a readable file; " + why.substr(path.size() + 2)});
    return std::nullopt;
  }
  if (!document->is_object()) {
    problems.push_back({path, "", "a JSON object"});
    return std::nullopt;
  }
  return std::move(document).value();
}

}  // namespace

ScenarioSpec spec_of(const BuiltinScenario& scenario) {
  ScenarioSpec spec;
  spec.id = scenario.id;
  spec.title = scenario.title;
  spec.tags = {"builtin"};
  spec.source = "builtin";
  spec.deadline = scenario.deadline;
  return spec;
}

std::vector<std::string> scenario_files_under(const std::string& scenario_dir) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : fs::recursive_directory_iterator(scenario_dir, error)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    const std::string top = fs::relative(entry.path(), scenario_dir).begin()->string();
    // Not engine scenarios: schemas, suites, device profiles, excludes, and the systems under
    // test that `faultline sut run` reads.
    if (top == "schema" || top == "suites" || top == "devices" || top == "excludes" || top == "sut")
      continue;
    files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

ScenarioCatalog ScenarioCatalog::load(const std::string& scenario_dir,
                                      std::vector<LoadProblem>& problems) {
  ScenarioCatalog catalog;
  catalog.directory_ = scenario_dir;
  for (const auto& builtin : builtin_scenarios()) catalog.scenarios_.push_back(spec_of(builtin));
  std::error_code error;
  if (!fs::is_directory(scenario_dir, error)) {
    problems.push_back({scenario_dir, "",
                        "a scenario directory (set FAULTLINE_SCENARIO_DIR or "
                        "--scenario-dir)"});
    return catalog;
  }
  const std::vector<std::string> files = scenario_files_under(scenario_dir);
  for (const auto& file : files) {
    auto spec = load_scenario_file(file, catalog.loader_options(), problems);
    if (!spec) continue;
    auto same = std::find_if(catalog.scenarios_.begin(), catalog.scenarios_.end(),
                             [&](const ScenarioSpec& other) { return other.id == spec->id; });
    if (same != catalog.scenarios_.end()) {
      problems.push_back(
          {file, "/id",
           "an id no other scenario has; " + same->source + " already has \"" + spec->id + "\""});
      continue;
    }
    catalog.scenarios_.push_back(std::move(*spec));
  }
  return catalog;
}

std::vector<std::string> ScenarioCatalog::suite_names() const {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory_ + "/suites", error)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<ScenarioSpec> ScenarioCatalog::resolve(const std::string& suite,
                                                   const std::vector<std::string>& names,
                                                   std::vector<ExcludeEntry>& excludes,
                                                   std::vector<LoadProblem>& problems) const {
  std::vector<std::string> patterns = names;
  std::string origin = "the command line";
  if (patterns.empty()) {
    const std::string path = directory_ + "/suites/" + suite + ".json";
    origin = path;
    if (!fs::exists(path)) {
      std::string known;
      for (const auto& name : suite_names()) known += (known.empty() ? "" : ", ") + name;
      const std::string suggestion = did_you_mean(closest_names(suite, suite_names()));
      problems.push_back({"--suite", "",
                          "a suite (" + known + "); got \"" + suite + "\"" +
                              (suggestion.empty() ? "" : "; " + suggestion)});
      return {};
    }
    auto document = read_json(path, problems);
    if (!document) return {};
    if (!document->contains("scenarios") || !document->at("scenarios").is_array()) {
      problems.push_back({path, "/scenarios", "an array of scenario ids or globs"});
      return {};
    }
    for (const auto& entry : document->at("scenarios"))
      patterns.push_back(entry.get<std::string>());
    for (const auto& file : document->value("exclude", json::array())) {
      auto entries = load_exclude_file(directory_ + "/" + file.get<std::string>(), problems);
      excludes.insert(excludes.end(), entries.begin(), entries.end());
    }
  }
  std::vector<ScenarioSpec> chosen;
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::string& pattern = patterns[i];
    if (looks_like_file(pattern)) {
      if (auto spec = load_scenario_file(pattern, loader_options(), problems))
        chosen.push_back(std::move(*spec));
      continue;
    }
    size_t found = 0;
    for (const auto& spec : scenarios_) {
      if (!matches(pattern, spec.id)) continue;
      ++found;
      const bool already = std::any_of(chosen.begin(), chosen.end(),
                                       [&](const ScenarioSpec& s) { return s.id == spec.id; });
      if (!already) chosen.push_back(spec);
    }
    if (found == 0) {
      std::vector<std::string> ids;
      for (const auto& spec : scenarios_) ids.push_back(spec.id);
      const std::string suggestion = did_you_mean(closest_names(pattern, ids));
      problems.push_back({origin, names.empty() ? "/scenarios/" + std::to_string(i) : "",
                          "a scenario id or glob; no scenario matches \"" + pattern + "\" (" +
                              (suggestion.empty() ? "" : suggestion + " ") +
                              "faultline list shows all " + std::to_string(ids.size()) + ")"});
    }
  }
  return chosen;
}

std::vector<ExcludeEntry> load_exclude_file(const std::string& path,
                                            std::vector<LoadProblem>& problems) {
  std::vector<ExcludeEntry> entries;
  auto document = read_json(path, problems);
  if (!document) return entries;
  if (!document->contains("entries") || !document->at("entries").is_array()) {
    problems.push_back({path, "/entries", "an array of {scenario, reason, transport?, provider?}"});
    return entries;
  }
  const auto& list = document->at("entries");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string pointer = "/entries/" + std::to_string(i);
    const json& entry = list[i];
    if (!entry.is_object() || !entry.contains("scenario") || !entry.at("scenario").is_string()) {
      problems.push_back({path, pointer + "/scenario", "a scenario id or glob (string)"});
      continue;
    }
    if (!entry.contains("reason") || !entry.at("reason").is_string() ||
        entry.at("reason").get<std::string>().empty()) {
      problems.push_back({path, pointer + "/reason", "the reason this is a known failure"});
      continue;
    }
    entries.push_back({entry.at("scenario"), entry.value("transport", ""),
                       entry.value("provider", ""), entry.at("reason")});
  }
  return entries;
}

void apply_excludes(std::vector<ScenarioSpec>& scenarios,
                    const std::vector<ExcludeEntry>& excludes) {
  for (auto& spec : scenarios) {
    for (const auto& entry : excludes) {
      if (matches(entry.scenario, spec.id))
        spec.known_failures.push_back({entry.transport, entry.provider, entry.reason});
    }
  }
}

}  // namespace faultline::harness
