// `faultline validate FILE...` and `faultline list [--json]`.
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/scenario/scenario_catalog.hpp"
#include "options/commands.hpp"

namespace faultline::cli {

namespace {

struct ValidateCommand {
  std::vector<std::string> files;
  std::string scenario_dir;

  int run() const {
    std::vector<harness::LoadProblem> problems;
    const harness::LoaderOptions options{
        (scenario_dir.empty() ? harness::default_scenario_dir() : scenario_dir) + "/devices"};
    // A directory stands for the scenario files under it.
    std::vector<std::string> expanded;
    for (const auto& file : files) {
      std::error_code error;
      if (!std::filesystem::is_directory(file, error)) {
        expanded.push_back(file);
        continue;
      }
      const auto found = harness::scenario_files_under(file);
      if (found.empty())
        problems.push_back({file, "", "a scenario file, or a directory holding some"});
      expanded.insert(expanded.end(), found.begin(), found.end());
    }
    size_t valid = 0;
    for (const auto& file : expanded) {
      if (harness::load_scenario_file(file, options, problems)) {
        ++valid;
        std::cout << file << ": valid\n";
      }
    }
    for (const auto& problem : problems)
      std::cerr << "faultline validate: " << problem.describe() << "\n";
    if (!problems.empty()) {
      std::cerr << "faultline validate: " << expanded.size() - valid << " of " << expanded.size()
                << " file(s) invalid\n";
      return harness::kExitUsage;
    }
    return harness::kExitPass;
  }
};

struct ListCommand {
  std::string scenario_dir;
  bool json = false;

  int run() const {
    std::vector<harness::LoadProblem> problems;
    const auto catalog = harness::ScenarioCatalog::load(
        scenario_dir.empty() ? harness::default_scenario_dir() : scenario_dir, problems);
    for (const auto& problem : problems)
      std::cerr << "faultline list: " << problem.describe() << "\n";
    if (!problems.empty()) return harness::kExitUsage;
    if (json) {
      nlohmann::json scenarios = nlohmann::json::array();
      for (const auto& spec : catalog.scenarios()) {
        scenarios.push_back({{"id", spec.id},
                             {"title", spec.title},
                             {"description", spec.description},
                             {"tags", spec.tags},
                             {"source", spec.source},
                             {"roles", spec.roles}});
      }
      std::cout << nlohmann::json{{"scenarios", scenarios}, {"suites", catalog.suite_names()}}.dump(
                       2)
                << "\n";
      return harness::kExitPass;
    }
    // Columns as wide as their longest entry and two spaces: a long tag list never runs into
    // the title.
    std::vector<std::string> tag_lists;
    size_t id_width = std::string("SCENARIO").size();
    size_t tags_width = std::string("TAGS").size();
    for (const auto& spec : catalog.scenarios()) {
      std::string tags;
      for (const auto& tag : spec.tags) tags += (tags.empty() ? "" : ",") + tag;
      id_width = std::max(id_width, spec.id.size());
      tags_width = std::max(tags_width, tags.size());
      tag_lists.push_back(std::move(tags));
    }
    const auto id_column = static_cast<int>(id_width + 2);
    const auto tags_column = static_cast<int>(tags_width + 2);
    std::cout << std::left << std::setw(id_column) << "SCENARIO" << std::setw(tags_column) << "TAGS"
              << "TITLE\n";
    for (size_t i = 0; i < catalog.scenarios().size(); ++i) {
      const auto& spec = catalog.scenarios()[i];
      std::cout << std::left << std::setw(id_column) << spec.id << std::setw(tags_column)
                << tag_lists[i] << spec.title << "\n";
    }
    std::cout << "\nsuites:";
    for (const auto& suite : catalog.suite_names()) std::cout << " " << suite;
    std::cout << "\n";
    return harness::kExitPass;
  }
};

}  // namespace

void add_scenario_commands(CLI::App& app, CommandAction& run) {
  auto validate = std::make_shared<ValidateCommand>();
  CLI::App* v = app.add_subcommand("validate", "Check scenario files against the schema");
  v->add_option("files", validate->files, "Scenario files, or directories of them")->required();
  v->add_option("--scenario-dir", validate->scenario_dir, "Where device profiles are found");
  v->footer(
      "Examples:\n  faultline validate scenarios/inline/*.json\n  faultline validate scenarios\n"
      "Every problem is printed as FILE: JSON-POINTER: expected ...; exit 2 if any.");
  v->callback([&run, validate] { run = [validate] { return validate->run(); }; });

  auto list = std::make_shared<ListCommand>();
  CLI::App* l = app.add_subcommand("list", "List scenarios and suites");
  l->add_option("--scenario-dir", list->scenario_dir, "Scenario directory");
  l->add_flag("--json", list->json, "Print JSON for machines");
  l->footer("Example:\n  faultline list --json");
  l->callback([&run, list] { run = [list] { return list->run(); }; });
}

}  // namespace faultline::cli
