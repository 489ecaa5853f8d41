// faultline sut run: SUT scenario files (scenarios/sut/), each role under `faultline sut exec`,
// the judged role's verdict against the expected one, and one report for all of them.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "faultline/harness/exit_codes.hpp"
#include "faultline/harness/sut/sut_run.hpp"
#include "faultline/reports/atomic_file.hpp"

namespace faultline::cli {

namespace {

using nlohmann::json;

struct SutRunOptions {
  std::vector<std::string> files;
  std::string needs;  ///< only scenarios that need one of these, comma-separated (default: all)
  std::string report_dir = "faultline-report";
};

// The files named, a directory standing for its *.json files (sorted).
std::vector<std::string> scenario_files(const std::vector<std::string>& named) {
  std::vector<std::string> files;
  for (const auto& path : named) {
    if (!std::filesystem::is_directory(path)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(path))
      if (entry.path().extension() == ".json") found.push_back(entry.path().string());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

std::string self_binary() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? "faultline" : self.string();
}

int run_sut_scenarios(const SutRunOptions& options) {
  std::vector<harness::sut::SutScenario> scenarios;
  for (const auto& file : scenario_files(options.files)) {
    auto scenario = harness::sut::load_sut_scenario(file);
    if (!scenario.ok()) {
      std::cerr << "faultline sut run: " << scenario.error().describe() << "\n";
      return harness::kExitUsage;
    }
    const bool wanted =
        options.needs.empty() ||
        ("," + options.needs + ",").find("," + scenario->needs + ",") != std::string::npos;
    if (wanted) scenarios.push_back(std::move(scenario).value());
  }
  if (scenarios.empty()) {
    std::cerr << "faultline sut run: no scenario files in " << options.files.size() << " path(s)\n";
    return harness::kExitUsage;
  }
  std::filesystem::create_directories(options.report_dir);
  const std::string report_path = options.report_dir + "/sut-report.json";
  json report = {{"schema", "faultline-sut-report/1"}, {"scenarios", json::array()}};
  int failed = 0;
  for (const auto& scenario : scenarios) {
    auto outcome = harness::sut::run_sut_scenario(scenario, {self_binary(), options.report_dir});
    if (!outcome.ok()) {
      std::cerr << "faultline sut run: " << scenario.name << ": "
                << outcome.error().describe_with_hint() << "\n";
      return harness::kExitHarnessError;
    }
    failed += outcome->result == "fail";
    std::cout << outcome->result << "  " << scenario.name << "  ("
              << (outcome->verdict.empty() ? "-" : outcome->verdict) << ", expected "
              << scenario.expect << ")"
              << (outcome->reason.empty() ? "" : "\n    " + outcome->reason) << "\n";
    report.at("scenarios").push_back(outcome->to_json());
    // Written after every scenario: a run cut short keeps what it measured.
    if (auto written = reports::write_file_atomically(report_path, report.dump(2) + "\n");
        !written.ok()) {
      std::cerr << "faultline sut run: " << written.error().describe() << "\n";
      return harness::kExitHarnessError;
    }
  }
  std::cout << "report: " << report_path << "\n";
  return failed == 0 ? 0 : 1;
}

}  // namespace

void add_sut_run_command(CLI::App& sut, CommandAction& run) {
  auto options = std::make_shared<SutRunOptions>();
  CLI::App* command = sut.add_subcommand(
      "run", "Run SUT scenario files (scenarios/sut/): programs, faults, the expected verdict");
  command->add_option("--needs", options->needs,
                      "Only the scenarios that need one of these: ofi,verbs,mpi");
  command->add_option("files", options->files, "Scenario files or directories of them")->required();
  command
      ->add_option("--report-dir", options->report_dir,
                   "sut-report.json and each role's sut.json go here")
      ->capture_default_str();
  command->footer(
      "Example:\n"
      "  faultline sut run scenarios/sut\n"
      "  faultline sut run --needs verbs scenarios/sut   (the Soft-RoCE lane's share)\n"
      "A scenario needing what this machine lacks (a verbs device, mpirun) is skipped, with the\n"
      "reason. Exit codes: 0 every verdict as expected; 1 one was not; 2 a bad scenario file;\n"
      "3 the harness could not run it.");
  command->callback([options, &run] { run = [options] { return run_sut_scenarios(*options); }; });
}

}  // namespace faultline::cli
