// faultline sut run: SUT scenario files (scenarios/sut/), each role under `faultline sut exec`,
// the judged role's verdict against the expected one, and one report for all of them.
#include <iostream>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/base/process.hpp"
#include "faultline/harness/runs/sut_suite.hpp"
#include "options/commands.hpp"
#include "options/metrics_options.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

namespace {

struct SutRunOptions {
  std::vector<std::string> files;
  std::string needs;  ///< only scenarios that need one of these, comma-separated (default: all)
  std::string report_dir = "faultline-report";
  MetricsOptions metrics_options;
};

int run_sut_scenarios(const SutRunOptions& options) {
  auto scenarios = harness::sut::load_sut_scenarios(options.files, options.needs);
  if (!scenarios.ok()) {
    std::cerr << "faultline sut run: " << scenarios.error().describe() << "\n";
    return harness::kExitUsage;
  }
  if (scenarios->empty()) {
    std::cerr << "faultline sut run: no scenario files"
              << (options.needs.empty() ? "" : " needing " + options.needs) << " in "
              << options.files.size() << " path(s)\n";
    return harness::kExitUsage;
  }
  auto metrics = options.metrics_options.start();
  if (!metrics.ok()) {
    std::cerr << "faultline sut run: " << metrics.error().describe_with_hint() << "\n";
    return harness::kExitUsage;
  }
  const int code = harness::sut::run_sut_suite(
      *scenarios, {harness::own_executable(), options.report_dir, "", metrics->get()}, std::cout,
      std::cerr);
  return options.metrics_options.finish("sut run", metrics->get(), code);
}

}  // namespace

void add_sut_run_command(CLI::App& sut, CommandAction& run) {
  auto options = std::make_shared<SutRunOptions>();
  CLI::App* command = sut.add_subcommand(
      "run", "Run SUT scenario files (scenarios/sut/): programs, faults, the expected verdict");
  command->add_option(
      "--needs", options->needs,
      "Only the scenarios that need one of these: ofi,verbs,mpi,stepmesh,stepmesh-verbs");
  command->add_option("files", options->files, "Scenario files or directories of them")->required();
  command
      ->add_option("--report-dir", options->report_dir,
                   "report.json, junit.xml, summary.md; each role's files in SCENARIO/ROLE/")
      ->check(report_dir())
      ->capture_default_str();
  options->metrics_options.add_to(command, true);
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
