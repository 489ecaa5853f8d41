// The report formats, once: what `faultline report --format` offers and what a run's report
// folder holds. A new format is its writer (`<name>_format.cpp`) and a row here.
#include <algorithm>
#include <array>

#include "faultline/reports/formats.hpp"

namespace faultline::reports {

namespace {

constexpr std::array kFormats{
    ReportFormat{"json", "report.json", to_report_json, true},
    ReportFormat{"junit", "junit.xml", to_junit, true},
    ReportFormat{"md", "summary.md", to_markdown, true},
    ReportFormat{"html", "report.html", to_html, false},
};

}  // namespace

std::string to_report_json(const nlohmann::json& report) { return report.dump(2) + "\n"; }

std::span<const ReportFormat> report_formats() { return kFormats; }

const ReportFormat* find_report_format(std::string_view name) {
  const auto* found =
      std::find_if(kFormats.begin(), kFormats.end(),
                   [name](const ReportFormat& format) { return format.name == name; });
  return found == kFormats.end() ? nullptr : found;
}

}  // namespace faultline::reports
