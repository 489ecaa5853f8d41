// report.json -> one self-contained HTML file: inline style and SVG, no scripts, nothing
// fetched. What went wrong comes first: the failures, then the errors grouped by cause, then
// skips and xfails, then the passes; every row links to its details; the pair grid and the
// traffic charts follow the table.
#include <algorithm>
#include <map>
#include <sstream>

#include "faultline/reports/formats.hpp"
#include "faultline/reports/report_view.hpp"
#include "faultline/reports/sweep_view.hpp"
#include "html_charts.hpp"
#include "markup_escape.hpp"

namespace faultline::reports {

namespace {

using nlohmann::json;

// One colour per verdict, xfail apart from pass; the grid's cells take the same.
constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:1.5em 2em;color:#222;max-width:75em}"
    "table{border-collapse:collapse;margin-bottom:1em}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}"
    "td.num{text-align:right}a{color:inherit}table.runs td:nth-child(-n+3){white-space:nowrap}"
    ".pass{color:#1a7f37}.xfail{color:#8250df}.skip{color:#6e7781}.error{color:#bc4c00;"
    "font-weight:bold}.fail,.crashed,.timeout{color:#cf222e;font-weight:bold}"
    ".badge{padding:1px 8px;border-radius:8px;margin-right:4px;color:#fff}"
    ".badge.pass{background:#1a7f37}.badge.xfail{background:#8250df}"
    ".badge.skip{background:#6e7781}.badge.error{background:#bc4c00}"
    ".badge.fail,.badge.crashed,.badge.timeout{background:#cf222e}"
    "table.grid td.cell{color:#fff;text-align:center;min-width:3em}"
    "table.grid td.pass{background:#1a7f37}table.grid td.xfail{background:#8250df}"
    "table.grid td.skip{background:#6e7781}table.grid td.error{background:#bc4c00}"
    "table.grid td.fail,table.grid td.crashed,table.grid td.timeout{background:#cf222e}"
    "table.grid td.none{background:#f6f8fa}"
    "tr.failure{background:#ffebe9}tr.group{background:#fff1e5}"
    "dt{font-weight:bold}dd{margin:0 0 .5em 1em;white-space:pre-wrap;font-family:monospace}"
    "section.run{border-top:1px solid #ccc;margin-top:1em}"
    "figure{margin:0 0 1em 0}figcaption{font-weight:bold;margin-bottom:4px}";

std::string field(const json& scenario, const char* name) {
  return escape_markup(scenario.value(name, std::string()));
}

std::string verdict_of(const json& scenario) {
  return scenario.value("verdict", std::string("error"));
}

std::string anchor(const json& scenario) {
  return "run-" + scenario.value("run_id", json(0)).dump();
}

std::string verdict_span(const json& scenario) {
  return "<span class=\"" + escape_markup(verdict_of(scenario)) + "\">" +
         escape_markup(verdict_label(scenario)) + "</span>";
}

// What makes errors the same cause: their observation without the agents named in it ("agent
// lost: node7 was lost earlier" and "... node9 ..." are one cause).
std::string cause_of(const json& scenario) {
  std::string text = scenario.value("observed", std::string());
  static constexpr std::string_view kLost = "agent lost: ";
  for (size_t at = text.find(kLost); at != std::string::npos; at = text.find(kLost, at)) {
    at += kLost.size();
    const size_t end = std::min(text.find(' ', at), text.size());
    text.replace(at, end - at, "AGENT");
    at += 5;
  }
  return text;
}

// The run's agents by name where the report has names ("rack1-a <-> rack2-b"), the ids in the
// title.
std::string agents_cell(const json& scenario, const std::map<std::string, std::string>& labels) {
  return "<span title=\"" + escape_markup(agents_label(scenario, {})) + "\">" +
         escape_markup(agents_label(scenario, labels)) + "</span>";
}

void write_row(std::ostringstream& html, const json& scenario, const char* row_class,
               const std::map<std::string, std::string>& labels) {
  html << "<tr" << (*row_class != '\0' ? std::string(" class=\"") + row_class + "\"" : "")
       << "><td><a href=\"#" << anchor(scenario) << "\">" << field(scenario, "id")
       << "</a></td><td>" << agents_cell(scenario, labels) << "</td><td>" << verdict_span(scenario)
       << "</td><td>" << field(scenario, "observed") << "</td><td class=\"num\">"
       << seconds(scenario) << "</td></tr>\n";
}

// The table of runs in reading order; errors of one cause share one row that opens to list
// them (a <details> in the row: no script needed).
void write_runs(std::ostringstream& html, const json& report) {
  const json scenarios = report.value("scenarios", json::array());
  const auto labels = agent_labels(report);
  std::vector<const json*> ordered;
  for (const auto& scenario : scenarios) ordered.push_back(&scenario);
  std::stable_sort(ordered.begin(), ordered.end(), [](const json* a, const json* b) {
    return reading_order(verdict_of(*a)) < reading_order(verdict_of(*b));
  });
  std::map<std::string, std::vector<const json*>> errors;  // by cause
  std::vector<std::string> causes;                         // in order of first appearance
  for (const json* scenario : ordered) {
    if (verdict_of(*scenario) != "error") continue;
    auto& group = errors[cause_of(*scenario)];
    if (group.empty()) causes.push_back(cause_of(*scenario));
    group.push_back(scenario);
  }
  html << "<h2 id=\"runs\">Runs</h2>\n<table class=\"runs\">\n<tr><th>scenario</th><th>agents"
          "</th><th>verdict</th><th>observed</th><th>seconds</th></tr>\n";
  bool errors_written = false;
  for (const json* scenario : ordered) {
    const std::string verdict = verdict_of(*scenario);
    if (verdict != "error") {
      write_row(html, *scenario, reading_order(verdict) == 0 ? "failure" : "", labels);
      continue;
    }
    if (errors_written) continue;
    errors_written = true;
    for (const auto& cause : causes) {
      const auto& group = errors.at(cause);
      if (group.size() == 1) {
        write_row(html, *group.front(), "", labels);
        continue;
      }
      html << "<tr class=\"group\"><td colspan=\"5\"><details><summary><span class=\"error\">"
           << group.size() << " errors</span>: " << escape_markup(cause) << "</summary><ul>";
      for (const json* run : group) {
        html << "<li><a href=\"#" << anchor(*run) << "\">" << field(*run, "id") << " ("
             << escape_markup(agents_label(*run, labels)) << ")</a></li>";
      }
      html << "</ul></details></td></tr>\n";
    }
  }
  html << "</table>\n";
}

// One side of a run: its steps with what each expected and saw, its traffic, its faults.
void write_side(std::ostringstream& html, const std::string& agent, const json& side,
                const std::map<std::string, std::string>& labels) {
  const json details = side.value("details", json::object());
  const std::string label = agent_label(labels, agent);
  html << "<h4>" << escape_markup(agent)
       << (label != agent ? " (" + escape_markup(label) + ")" : "") << ": "
       << escape_markup(details.value("role", std::string())) << ", " << verdict_span(side)
       << "</h4>\n";
  const json steps = details.value("steps", json::array());
  if (!steps.empty()) {
    html << "<table><tr><th>step</th><th>op</th><th>met</th><th>note</th></tr>\n";
    for (const auto& step : steps) {
      const bool met = step.value("met", false);
      html << "<tr><td class=\"num\">" << step.value("step", json(0)).dump() << "</td><td>"
           << escape_markup(step.value("op", std::string())) << "</td><td class=\""
           << (met ? "pass\">yes" : "fail\">no") << "</td><td>"
           << escape_markup(step.value("note", std::string())) << "</td></tr>\n";
    }
    html << "</table>\n";
  }
  const json traffic = details.value("traffic", json::object());
  const json bytes = traffic.value("bytes", json::object());
  std::string completions;
  const json by_status = traffic.value("completions", json::object());
  for (const auto& [status, count] : by_status.items())
    completions += (completions.empty() ? "" : ", ") + status + " " + count.dump();
  html << "<dl>";
  for (const char* name : {"expected", "observed", "evidence", "hint"}) {
    if (!side.value(name, std::string()).empty())
      html << "<dt>" << name << "</dt><dd>" << field(side, name) << "</dd>\n";
  }
  html << "<dt>traffic</dt><dd>sent " << bytes.value("sent", json(0)).dump() << " B, received "
       << bytes.value("received", json(0)).dump()
       << " B; completions: " << escape_markup(completions.empty() ? "none" : completions)
       << "</dd>\n";
  const json faults = details.value("faults", json::object());
  std::string applied;
  for (const auto& fault : faults.value("applied", json::array()))
    applied += (applied.empty() ? "" : "\n") + fault.value("kind", std::string()) + ": " +
               fault.value("detail", std::string());
  html << "<dt>faults applied</dt><dd>" << escape_markup(applied.empty() ? "none" : applied)
       << "</dd></dl>\n";
}

// SUT scenarios: how each program ended, and a hung one's stacks (folded).
void write_programs(std::ostringstream& html, const json& scenarios) {
  bool heading = false;
  for (const auto& scenario : scenarios) {
    const auto lines = program_lines(scenario);
    if (lines.empty()) continue;
    if (!heading) html << "<h2 id=\"programs\">Programs under faults</h2>\n";
    heading = true;
    const json& sut = scenario.at("sut");
    html << "<h3><a href=\"#" << anchor(scenario) << "\">" << field(scenario, "id")
         << "</a>: " << verdict_span(scenario) << ", expected "
         << escape_markup(sut.value("expect", std::string())) << "</h3>\n<dl>\n";
    const json roles = sut.value("roles", json::object());
    for (const auto& [role, text] : lines) {
      html << "<dt>" << escape_markup(role) << "</dt><dd>" << escape_markup(text);
      const std::string stacks = roles.value(role, json::object()).value("stacks", "");
      if (!stacks.empty())
        html << "<details><summary>stacks</summary>" << escape_markup(stacks) << "</details>";
      html << "</dd>\n";
    }
    html << "</dl>\n";
  }
}

void write_details(std::ostringstream& html, const json& report) {
  const auto labels = agent_labels(report);
  html << "<h2 id=\"details\">Details</h2>\n";
  for (const auto& scenario : report.value("scenarios", json::array())) {
    const bool passed = verdict_of(scenario) == "pass";
    // Passes folded (a run's details open when its row's link is followed); the rest open.
    html << "<section class=\"run\" id=\"" << anchor(scenario) << "\">"
         << (passed ? "<details><summary>" : "<h3>") << field(scenario, "id") << " ("
         << agents_cell(scenario, labels) << "): " << verdict_span(scenario)
         << (passed ? "</summary>" : "</h3>") << "\n<dl>\n";
    for (const char* name : {"expected", "observed", "evidence", "hint", "source"}) {
      if (scenario.value(name, std::string()).empty()) continue;
      html << "<dt>" << name << "</dt><dd>" << field(scenario, name) << "</dd>\n";
    }
    for (const auto& [label, text] : device_evidence(scenario, labels))
      html << "<dt>" << escape_markup(label) << "</dt><dd>" << escape_markup(text) << "</dd>\n";
    html << "</dl>\n";
    const json sides = scenario.value("sides", json::object());
    for (const auto& [agent, side] : sides.items()) write_side(html, agent, side, labels);
    html << (passed ? "</details>" : "") << "</section>\n";
  }
}

}  // namespace

namespace {

// A monitor round: its suspects first, then its agents' health.
void write_monitor(std::ostringstream& html, const json& report) {
  const MonitorView view = monitor_view(report);
  if (view.summary.empty()) return;
  html << "<h2 id=\"monitor\">Monitor " << escape_markup(view.summary) << "</h2>\n";
  if (view.suspects.empty()) html << "<p>No suspect.</p>\n";
  if (!view.suspects.empty()) html << "<ul class=\"suspects\">\n";
  for (const auto& suspect : view.suspects) {
    html << "<li class=\"suspect\"><b class=\"fail\">" << escape_markup(suspect[0]) << " "
         << escape_markup(suspect[1]) << "</b> (" << escape_markup(suspect[2])
         << "): " << escape_markup(suspect[3]) << "</li>\n";
  }
  if (!view.suspects.empty()) html << "</ul>\n";
  html << "<table class=\"agents\"><tr><th>agent</th><th>rail</th><th>pairs ok/slow/failed</th>"
          "<th>round trip p50</th><th>p99</th></tr>\n";
  for (const auto& agent : view.agents) {
    html << "<tr>";
    for (size_t i = 0; i < agent.size(); ++i)
      html << (i >= 3 ? "<td class=\"num\">" : "<td>") << escape_markup(agent[i]) << "</td>";
    html << "</tr>\n";
  }
  html << "</table>\n";
}

// A sweep: its score, its matrix as a coloured grid (call sites by families, the worst row
// first), what changed since the baseline, and the stacks of the hung points.
void write_sweep(std::ostringstream& html, const json& report) {
  const SweepView view = sweep_view(report);
  if (view.score.empty()) return;
  html << "<h2 id=\"sweep\">Sweep: " << escape_markup(view.score) << "</h2>\n";
  // At a glance: how much of the sweep was judged (red when not all), and the worst verdict.
  html << "<p id=\"sweep-coverage\"><span class=\"badge "
       << (view.judged == view.planned ? "pass" : "fail") << "\">" << view.judged << " of "
       << view.planned << " points judged</span>";
  if (!view.worst.empty())
    html << "<span class=\"badge " << sweep_verdict_class(view.worst)
         << "\">worst: " << escape_markup(view.worst) << "</span>";
  html << "</p>\n";
  if (!view.stopped.empty())
    html << "<p>Not every point ran: " << escape_markup(view.stopped) << ".</p>\n";
  html << "<table class=\"grid sweep\"><tr><th>call site</th>";
  for (const auto& family : view.families) html << "<th>" << escape_markup(family) << "</th>";
  html << "</tr>\n";
  for (const auto& row : view.rows) {
    html << "<tr><td>" << escape_markup(row.name) << "</td>";
    for (const auto& entry : row.cells) {
      if (entry.text.empty()) {
        html << "<td class=\"cell none\"></td>";
        continue;
      }
      html << "<td class=\"cell " << sweep_verdict_class(entry.worst) << "\" title=\""
           << escape_markup(entry.worst) << "\">" << escape_markup(entry.text) << "</td>";
    }
    html << "</tr>\n";
  }
  html << "</table>\n";
  if (!view.changes.empty()) {
    html << "<h3>Changed since the baseline</h3>\n<table><tr><th>point</th><th>before</th>"
            "<th>after</th></tr>\n";
    for (const auto& change : view.changes)
      html << "<tr><td>" << escape_markup(change[0]) << "</td><td>" << escape_markup(change[1])
           << "</td><td class=\"" << sweep_verdict_class(change[2]) << "\">"
           << escape_markup(change[2]) << "</td></tr>\n";
    html << "</table>\n";
  }
  if (view.hangs.empty()) return;
  html << "<h3>Hung points</h3>\n<dl>\n";
  for (const auto& hang : view.hangs)
    html << "<dt>" << escape_markup(hang[0]) << "</dt><dd>" << escape_markup(hang[1]) << "</dd>\n";
  html << "</dl>\n";
}

}  // namespace

std::string to_html(const json& report) {
  const json run = report.value("run", json::object());
  const json scenarios = report.value("scenarios", json::array());
  std::ostringstream html;
  const std::string title = "faultline: " + escape_markup(suite_name(report));
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << title
       << "</title><style>" << kStyle << "</style></head><body>\n";
  html << "<h1>" << title << "</h1>\n<p id=\"verdicts\">" << scenarios.size() << " runs: ";
  const auto by_verdict = verdict_counts(report);
  std::vector<std::pair<std::string, int>> counts(by_verdict.begin(), by_verdict.end());
  std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
    return reading_order(a.first) < reading_order(b.first);
  });
  for (const auto& [verdict, count] : counts)
    html << "<span class=\"badge " << escape_markup(verdict) << "\">" << count << " "
         << escape_markup(verdict) << "</span>";
  html << "</p>\n<ul>\n<li>target: " << escape_markup(target_label(report)) << "</li>\n";
  html << "<li>seed: " << run.value("seed", json(0)).dump() << "</li>\n";
  html << "<li>faultline " << escape_markup(report.value("faultline_version", std::string()))
       << " on " << escape_markup(run.value("host", std::string())) << " ("
       << escape_markup(run.value("kernel", std::string())) << ")</li>\n";
  html << "<li>started " << escape_markup(run.value("started_at", std::string()))
       << (run.value("complete", false) ? ", complete" : ", <b>incomplete</b>") << "</li>\n";
  if (run.contains("not_run"))
    html << "<li>nothing ran: " << escape_markup(run.value("not_run", std::string())) << "</li>\n";
  html << "</ul>\n";
  write_monitor(html, report);
  write_sweep(html, report);
  write_runs(html, report);
  write_programs(html, scenarios);
  html::write_pair_grid(html, report);
  html::write_charts(html, report);
  write_details(html, report);
  html << "</body></html>\n";
  return html.str();
}

}  // namespace faultline::reports
