// report.json -> summary.md, for people: the run, the table of runs, what did not pass and
// why, and for pair scans over 3 or more agents a matrix of agents.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "faultline/core/printable_text.hpp"
#include "faultline/reports/formats.hpp"
#include "faultline/reports/report_view.hpp"
#include "faultline/reports/sweep_view.hpp"

namespace faultline::reports {

namespace {

using nlohmann::json;

// Every value of the report as Markdown text: no HTML of its own (GitHub and GitLab render
// some: a '<' that would open a tag and a '&' that would start an entity are escaped, while
// "agent-1 <-> agent-2" stays readable), no escape sequence, no newline or unescaped pipe to
// break a table cell.
std::string cell(const std::string& bytes) {
  const std::string text = printable(bytes);
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto next = static_cast<unsigned char>(i + 1 < text.size() ? text[i + 1] : ' ');
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += "<br>";
    } else if (c == '<' && (std::isalpha(next) || next == '/' || next == '!' || next == '?')) {
      out += "&lt;";
    } else if (c == '&' && (std::isalnum(next) || next == '#')) {
      out += "&amp;";
    } else {
      out += c;
    }
  }
  return out;
}

// A field of the report as Markdown text (`cell`).
std::string field(const json& scenario, const char* name) {
  return cell(scenario.value(name, std::string()));
}

// For each pair of agents, how its runs went: "pass" when none failed, else how many did
// ("2"), then the skips and expected failures, which are neither, and the runs in all:
// "pass, 3 skip (5)", "1, 1 xfail (4)".
std::string pair_cell(const PairCell& pair) {
  const auto count = [&pair](const char* verdict) {
    const auto found = pair.verdicts.find(verdict);
    return found == pair.verdicts.end() ? 0 : found->second;
  };
  const int failed = pair.runs - count("pass") - count("skip") - count("xfail");
  std::string text = failed == 0 ? "pass" : std::to_string(failed);
  for (const char* apart : {"skip", "xfail"})
    if (count(apart) > 0) text += ", " + std::to_string(count(apart)) + " " + apart;
  return text + " (" + std::to_string(pair.runs) + ")";
}

void write_pair_matrix(std::ostringstream& md, const json& report) {
  const PairMatrix matrix = pair_matrix(report);
  if (matrix.agents.empty()) return;
  md << "\n## Pairs\n\nRuns that failed (fail, crashed, timeout or error) by pair of agents, "
        "then the skipped and the expected failures, of how many runs.\n\n|";
  for (const auto& agent : matrix.agents) md << " | " << cell(agent);
  md << " |\n|---";
  for (size_t i = 0; i < matrix.agents.size(); ++i) md << "|---";
  md << "|\n";
  for (const auto& row : matrix.agents) {
    md << "| " << cell(row);
    for (const auto& column : matrix.agents) {
      const auto found = matrix.cells.find({row, column});
      md << " | " << (row == column || found == matrix.cells.end() ? "" : pair_cell(found->second));
    }
    md << " |\n";
  }
}

// SUT scenarios: how each program ended, passed or not (the verdict is the finding).
void write_programs(std::ostringstream& md, const json& scenarios) {
  bool heading = false;
  for (const auto& scenario : scenarios) {
    const auto lines = program_lines(scenario);
    if (lines.empty()) continue;
    if (!heading) md << "\n## Programs under faults\n";
    heading = true;
    md << "\n### " << field(scenario, "id") << ": " << verdict_label(scenario) << ", expected "
       << cell(scenario.at("sut").value("expect", std::string())) << "\n\n";
    for (const auto& [role, text] : lines) md << "- " << cell(role) << ": " << cell(text) << "\n";
  }
}

}  // namespace

namespace {

// A monitor round: its suspects first, then its agents' health.
void write_monitor(std::ostringstream& md, const json& report) {
  const MonitorView view = monitor_view(report);
  if (view.summary.empty()) return;
  md << "\n## Monitor " << cell(view.summary) << "\n\n";
  if (view.suspects.empty()) md << "No suspect.\n";
  for (const auto& suspect : view.suspects) {
    md << "- suspect " << cell(suspect[0]) << " **" << cell(suspect[1]) << "** ("
       << cell(suspect[2]) << "): " << cell(suspect[3]) << "\n";
  }
  md << "\n| agent | rail | pairs ok/slow/failed | round trip p50 | p99 "
        "|\n|---|---|---|---:|---:|\n";
  for (const auto& agent : view.agents) {
    md << "|";
    for (const auto& column : agent) md << " " << cell(column) << " |";
    md << "\n";
  }
}

// A sweep: its score, then its matrix (call sites by families, the worst first), what changed
// since the baseline, and the stacks of the hung points.
void write_sweep(std::ostringstream& md, const json& report) {
  const SweepView view = sweep_view(report);
  if (view.score.empty()) return;
  md << "\n## Sweep: " << cell(view.score) << "\n\n";
  if (!view.stopped.empty()) md << "Not every point ran: " << cell(view.stopped) << ".\n\n";
  md << "| call site |";
  for (const auto& family : view.families) md << " " << cell(family) << " |";
  md << "\n|---|";
  for (size_t i = 0; i < view.families.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& row : view.rows) {
    md << "| " << cell(row.name) << " |";
    for (const auto& entry : row.cells) md << " " << cell(entry.text) << " |";
    md << "\n";
  }
  if (!view.changes.empty()) {
    md << "\n### Changed since the baseline\n\n| point | before | after |\n|---|---|---|\n";
    for (const auto& change : view.changes)
      md << "| " << cell(change[0]) << " | " << cell(change[1]) << " | " << cell(change[2])
         << " |\n";
  }
  for (const auto& hang : view.hangs)
    md << "\n" << cell(hang[0]) << ", hung stacks (folded):\n\n```\n" << hang[1] << "```\n";
}

}  // namespace

std::string to_markdown(const json& report) {
  const json run = report.value("run", json::object());
  const json scenarios = report.value("scenarios", json::array());
  const json summary = report.value("summary", json::object());
  std::ostringstream md;
  md << "# faultline: " << cell(suite_name(report)) << "\n\n";
  md << "- target: " << cell(target_label(report)) << "\n";
  md << "- seed: " << run.value("seed", uint64_t{0}) << "\n";
  md << "- faultline " << cell(report.value("faultline_version", std::string())) << " on "
     << field(run, "host") << " (" << field(run, "kernel") << ")\n";
  md << "- started " << field(run, "started_at") << ", updated " << field(run, "updated_at")
     << (run.value("complete", false) ? ", complete" : ", INCOMPLETE: the run did not finish")
     << "\n";
  if (run.contains("not_run")) md << "- nothing ran: " << field(run, "not_run") << "\n";
  md << "- " << scenarios.size() << " of " << summary.value("total", scenarios.size())
     << " scenario runs:";
  for (const auto& [verdict, count] : verdict_counts(report))
    md << " " << count << " " << cell(verdict);
  md << "\n";
  write_monitor(md, report);
  write_sweep(md, report);
  const auto labels = agent_labels(report);
  md << "\n## Scenarios\n\n| scenario | agents | verdict | seconds |\n|---|---|---|---:|\n";
  for (const auto& scenario : scenarios) {
    md << "| " << field(scenario, "id") << " | " << cell(agents_label(scenario, labels)) << " | "
       << verdict_label(scenario) << " | " << seconds(scenario) << " |\n";
  }
  const bool all_passed = std::all_of(scenarios.begin(), scenarios.end(), [](const json& s) {
    return s.value("verdict", std::string()) == "pass";
  });
  // Passes whose point was a failure seen to happen: what was seen.
  bool detected_header = false;
  for (const auto& scenario : scenarios) {
    if (field(scenario, "verdict") != "pass" || field(scenario, "observed").empty()) continue;
    if (!detected_header) md << "\n## Failures detected as the scenarios expect\n\n";
    detected_header = true;
    md << "- " << field(scenario, "id") << " (" << cell(agents_label(scenario, labels))
       << "): " << field(scenario, "observed") << "\n";
  }
  if (!all_passed) {
    md << "\n## Not passed\n";
    for (const auto& scenario : scenarios) {
      if (field(scenario, "verdict") == "pass") continue;
      md << "\n### " << field(scenario, "id") << " (" << cell(agents_label(scenario, labels))
         << "): " << field(scenario, "verdict") << "\n\n";
      for (const char* name : {"expected", "observed", "evidence", "hint"}) {
        if (!field(scenario, name).empty())
          md << "- " << name << ": " << field(scenario, name) << "\n";
      }
      for (const auto& [label, text] : device_evidence(scenario, labels))
        md << "- " << label << ": " << cell(text) << "\n";
      if (!field(scenario, "source").empty())
        md << "- scenario: " << field(scenario, "source") << "\n";
    }
  }
  write_programs(md, scenarios);
  write_pair_matrix(md, report);
  return md.str();
}

}  // namespace faultline::reports
