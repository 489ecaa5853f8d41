#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

namespace faultline::reports {

/// The report document as report.json holds it (two-space indented, newline-terminated).
std::string to_report_json(const nlohmann::json& report);
/// JUnit XML: one testsuite for the run's suite, one testcase per scenario run; fail is a
/// failure, error/crashed/timeout an error (type = the verdict), skip a skipped with its
/// reason, xfail a pass whose system-out says why it is a known failure. Each failure's text
/// holds expected, observed, evidence and hint.
std::string to_junit(const nlohmann::json& report);
/// summary.md: the run, a table of scenario runs and verdicts, then each run that did not pass
/// with expected, observed, evidence and hint; for pair scans over 3 or more agents, a matrix
/// of agents.
std::string to_markdown(const nlohmann::json& report);
/// The same as one self-contained HTML file (inline style, no scripts, no external links).
std::string to_html(const nlohmann::json& report);

/// One report format: its name (`faultline report --format NAME`), the file it is kept in, its
/// writer, and whether a run keeps it up to date in its report folder as it goes.
struct ReportFormat {
  std::string_view name;
  std::string_view file;
  std::string (*write)(const nlohmann::json& report);
  bool in_report_folder;
};

/// Every report format (report_formats.cpp: a new format is its writer's file and a row there).
std::span<const ReportFormat> report_formats();
/// The format named `name`, or nullptr.
const ReportFormat* find_report_format(std::string_view name);

}  // namespace faultline::reports
