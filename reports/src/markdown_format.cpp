// report.json -> summary.md, for people: the run, the table of runs, what did not pass and
// why, and for pair scans over 3 or more agents a matrix of agents.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "faultline/reports/formats.hpp"
#include "faultline/reports/report_view.hpp"

namespace faultline::reports {

namespace {

using nlohmann::json;

// Table cells may not hold a newline or an unescaped pipe.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += "<br>";
    } else {
      out += c;
    }
  }
  return out;
}

std::string field(const json& scenario, const char* name) {
  return scenario.value(name, std::string());
}

// For each pair of agents, how its runs went: "pass" when all passed, else the count that
// did not ("2 of 5 not pass").
// How the matrix names an agent: its name, and its host where that differs ("rail0-a (node7)").
std::map<std::string, std::string> agent_labels(const json& run) {
  std::map<std::string, std::string> labels;
  for (const auto& agent : run.value("agents", json::array())) {
    const std::string name = agent.value("name", agent.value("id", std::string()));
    const std::string host = agent.value("host", std::string());
    labels[agent.value("id", std::string())] =
        name == host || host.empty() ? name : name + " (" + host + ")";
  }
  return labels;
}

void write_pair_matrix(std::ostringstream& md, const json& run, const json& scenarios) {
  const auto labels = agent_labels(run);
  const auto label = [&labels](const std::string& id) {
    auto found = labels.find(id);
    return found == labels.end() ? id : found->second;
  };
  std::set<std::string> agents;
  std::map<std::pair<std::string, std::string>, std::pair<int, int>> cells;  // (not pass, all)
  for (const auto& scenario : scenarios) {
    const json ranks = scenario.value("agents", json::object()).value("ranks", json::array());
    if (ranks.size() != 2) continue;
    // By name (unique among the agents), so the matrix reads the same from run to run.
    const std::string a = label(ranks[0]);
    const std::string b = label(ranks[1]);
    agents.insert(a);
    agents.insert(b);
    const bool passed = field(scenario, "verdict") == "pass";
    for (const auto& key : {std::pair{a, b}, std::pair{b, a}}) {
      cells[key].second += 1;
      cells[key].first += passed ? 0 : 1;
    }
  }
  if (agents.size() < 3) return;
  md << "\n## Pairs\n\nRuns that did not pass, by pair of agents (of how many runs).\n\n|";
  for (const auto& agent : agents) md << " | " << cell(agent);
  md << " |\n|---";
  for (size_t i = 0; i < agents.size(); ++i) md << "|---";
  md << "|\n";
  for (const auto& row : agents) {
    md << "| " << cell(row);
    for (const auto& column : agents) {
      auto found = cells.find({row, column});
      if (row == column || found == cells.end()) {
        md << " | ";
      } else {
        const auto [not_passed, all] = found->second;
        md << " | " << (not_passed == 0 ? "pass" : std::to_string(not_passed)) << " (" << all
           << ")";
      }
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
       << scenario.at("sut").value("expect", std::string()) << "\n\n";
    for (const auto& [role, text] : lines) md << "- " << role << ": " << cell(text) << "\n";
  }
}

}  // namespace

std::string to_markdown(const json& report) {
  const json run = report.value("run", json::object());
  const json scenarios = report.value("scenarios", json::array());
  const json summary = report.value("summary", json::object());
  std::ostringstream md;
  md << "# faultline: " << suite_name(report) << "\n\n";
  md << "- target: " << target_label(report) << "\n";
  md << "- seed: " << run.value("seed", uint64_t{0}) << "\n";
  md << "- faultline " << report.value("faultline_version", std::string()) << " on "
     << run.value("host", std::string()) << " (" << run.value("kernel", std::string()) << ")\n";
  md << "- started " << run.value("started_at", std::string()) << ", updated "
     << run.value("updated_at", std::string())
     << (run.value("complete", false) ? ", complete" : ", INCOMPLETE: the run did not finish")
     << "\n";
  if (run.contains("not_run"))
    md << "- nothing ran: " << run.value("not_run", std::string()) << "\n";
  md << "- " << scenarios.size() << " of " << summary.value("total", scenarios.size())
     << " scenario runs:";
  for (const auto& [verdict, count] : verdict_counts(report)) md << " " << count << " " << verdict;
  md << "\n\n## Scenarios\n\n| scenario | agents | verdict | seconds |\n|---|---|---|---:|\n";
  for (const auto& scenario : scenarios) {
    md << "| " << cell(field(scenario, "id")) << " | " << cell(agents_label(scenario)) << " | "
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
    md << "- " << field(scenario, "id") << " (" << agents_label(scenario)
       << "): " << cell(field(scenario, "observed")) << "\n";
  }
  if (!all_passed) {
    md << "\n## Not passed\n";
    for (const auto& scenario : scenarios) {
      if (field(scenario, "verdict") == "pass") continue;
      md << "\n### " << field(scenario, "id") << " (" << agents_label(scenario)
         << "): " << field(scenario, "verdict") << "\n\n";
      for (const char* name : {"expected", "observed", "evidence", "hint"}) {
        if (!field(scenario, name).empty())
          md << "- " << name << ": " << cell(field(scenario, name)) << "\n";
      }
      for (const auto& [label, text] : device_evidence(scenario))
        md << "- " << label << ": " << cell(text) << "\n";
      if (!field(scenario, "source").empty())
        md << "- scenario: `" << field(scenario, "source") << "`\n";
    }
  }
  write_programs(md, scenarios);
  write_pair_matrix(md, run, scenarios);
  return md.str();
}

}  // namespace faultline::reports
