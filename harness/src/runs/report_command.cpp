// faultline report: a report.json turned into Markdown, JUnit or HTML after the run.
#include <iostream>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/runs/report_reader.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/formats.hpp"
#include "options/commands.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

namespace {

struct ReportOptions {
  std::string format = "md";
  std::string output;
  std::string input;
};

}  // namespace

void add_report_command(CLI::App& app, CommandAction& run) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* command = app.add_subcommand(
      "report", "Convert a report.json to Markdown, JUnit XML or one self-contained HTML file");
  std::vector<std::string> names;
  for (const auto& format : reports::report_formats()) names.emplace_back(format.name);
  command->add_option("--format", options->format, "The format: " + CLI::detail::join(names, ", "))
      ->check(CLI::IsMember(names))
      ->capture_default_str();
  command
      ->add_option("-o,--output", options->output,
                   "Write here (atomically; a new or regular file, - for stdout) instead of stdout")
      ->check(user_file());
  command->add_option("report", options->input, "The report.json of a run")->required();
  command->footer(
      "Examples:\n"
      "  faultline report faultline-report/report.json\n"
      "  faultline report --format junit -o junit.xml faultline-report/report.json\n"
      "  faultline report --format html -o report.html faultline-report/report.json\n"
      "Exit codes: 0 written, 2 a usage error or a file that is not a faultline report.");
  command->callback([options, &run] {
    run = [options] {
      auto report = harness::read_report(options->input);
      if (!report.ok()) {
        std::cerr << "faultline report: " << report.error().describe() << "\n";
        return static_cast<int>(harness::kExitUsage);
      }
      const std::string text = reports::find_report_format(options->format)->write(report.value());
      if (options->output.empty()) {
        std::cout << text;
        return static_cast<int>(harness::kExitPass);
      }
      if (auto written = reports::write_user_file(options->output, text); !written.ok()) {
        std::cerr << "faultline report: " << written.error().describe() << "\n";
        return static_cast<int>(harness::kExitUsage);
      }
      return static_cast<int>(harness::kExitPass);
    };
  });
}

}  // namespace faultline::cli
