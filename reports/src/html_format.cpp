// report.json -> one self-contained HTML file: inline style, no scripts, nothing fetched.
#include <sstream>

#include "faultline/reports/formats.hpp"
#include "faultline/reports/report_view.hpp"
#include "markup_escape.hpp"

namespace faultline::reports {

namespace {

using nlohmann::json;

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
    "td.num{text-align:right}.pass,.xfail{color:#1a7f37}.skip{color:#777}"
    ".fail,.error,.crashed,.timeout{color:#cf222e;font-weight:bold}"
    "dt{font-weight:bold}dd{margin:0 0 .5em 1em;white-space:pre-wrap;font-family:monospace}";

std::string field(const json& scenario, const char* name) {
  return escape_markup(scenario.value(name, std::string()));
}

// SUT scenarios: how each program ended, and a hung one's stacks (folded).
void write_programs(std::ostringstream& html, const json& scenarios) {
  bool heading = false;
  for (const auto& scenario : scenarios) {
    const auto lines = program_lines(scenario);
    if (lines.empty()) continue;
    if (!heading) html << "<h2>Programs under faults</h2>\n";
    heading = true;
    const json& sut = scenario.at("sut");
    html << "<h3>" << field(scenario, "id") << ": <span class=\"" << field(scenario, "verdict")
         << "\">" << escape_markup(verdict_label(scenario)) << "</span>, expected "
         << escape_markup(sut.value("expect", std::string())) << "</h3>\n<dl>\n";
    for (const auto& [role, text] : lines) {
      html << "<dt>" << escape_markup(role) << "</dt><dd>" << escape_markup(text);
      const json ended = sut.value("roles", json::object()).value(role, json::object());
      if (const std::string stacks = ended.value("stacks", std::string()); !stacks.empty()) {
        html << "<details><summary>stacks</summary>" << escape_markup(stacks) << "</details>";
      }
      html << "</dd>\n";
    }
    html << "</dl>\n";
  }
}

}  // namespace

std::string to_html(const json& report) {
  const json run = report.value("run", json::object());
  const json scenarios = report.value("scenarios", json::array());
  std::ostringstream html;
  const std::string title = "faultline: " + escape_markup(suite_name(report));
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << title
       << "</title><style>" << kStyle << "</style></head><body>\n";
  html << "<h1>" << title << "</h1>\n<ul>\n";
  html << "<li>target: " << escape_markup(target_label(report)) << "</li>\n";
  html << "<li>seed: " << run.value("seed", uint64_t{0}) << "</li>\n";
  html << "<li>faultline " << escape_markup(report.value("faultline_version", std::string()))
       << " on " << escape_markup(run.value("host", std::string())) << " ("
       << escape_markup(run.value("kernel", std::string())) << ")</li>\n";
  html << "<li>started " << escape_markup(run.value("started_at", std::string()))
       << (run.value("complete", false) ? ", complete" : ", <b>incomplete</b>") << "</li>\n";
  html << "<li>" << scenarios.size() << " scenario runs:";
  for (const auto& [verdict, count] : verdict_counts(report))
    html << " <span class=\"" << escape_markup(verdict) << "\">" << count << " "
         << escape_markup(verdict) << "</span>";
  html << "</li>\n</ul>\n<h2>Scenarios</h2>\n<table>\n"
       << "<tr><th>scenario</th><th>agents</th><th>verdict</th><th>seconds</th></tr>\n";
  for (const auto& scenario : scenarios) {
    html << "<tr><td>" << field(scenario, "id") << "</td><td>"
         << escape_markup(agents_label(scenario)) << "</td><td class=\""
         << field(scenario, "verdict") << "\">" << escape_markup(verdict_label(scenario))
         << "</td><td class=\"num\">" << seconds(scenario) << "</td></tr>\n";
  }
  html << "</table>\n";
  bool heading = false;
  for (const auto& scenario : scenarios) {
    if (scenario.value("verdict", std::string()) == "pass") continue;
    if (!heading) html << "<h2>Not passed</h2>\n";
    heading = true;
    html << "<h3>" << field(scenario, "id") << " (" << escape_markup(agents_label(scenario))
         << "): <span class=\"" << field(scenario, "verdict") << "\">" << field(scenario, "verdict")
         << "</span></h3>\n<dl>\n";
    for (const char* name : {"expected", "observed", "evidence", "hint", "source"}) {
      if (scenario.value(name, std::string()).empty()) continue;
      html << "<dt>" << name << "</dt><dd>" << field(scenario, name) << "</dd>\n";
    }
    for (const auto& [label, text] : device_evidence(scenario))
      html << "<dt>" << escape_markup(label) << "</dt><dd>" << escape_markup(text) << "</dd>\n";
    html << "</dl>\n";
  }
  write_programs(html, scenarios);
  html << "</body></html>\n";
  return html.str();
}

}  // namespace faultline::reports
