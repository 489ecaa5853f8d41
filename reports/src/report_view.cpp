#include "faultline/reports/report_view.hpp"

#include <set>

#include <algorithm>
#include <cstdio>

namespace faultline::reports {

using nlohmann::json;

std::string agents_label(const json& scenario) {
  const json agents = scenario.value("agents", json::object());
  const json ranks = agents.value("ranks", json::array());
  const json tags = scenario.value("tags", json::array());
  if (std::find(tags.begin(), tags.end(), "sut") != tags.end()) {
    std::string roles;
    for (const auto& role : ranks) roles += (roles.empty() ? "" : ", ") + role.get<std::string>();
    return roles;
  }
  if (ranks.size() <= 2) {
    return agents.value("initiator", std::string("?")) + " <-> " +
           agents.value("responder", std::string("?"));
  }
  return "ring of " + std::to_string(ranks.size()) + " (" + ranks.front().get<std::string>() +
         ".." + ranks.back().get<std::string>() + ")";
}

std::string verdict_label(const json& scenario) {
  std::string verdict = scenario.value("verdict", std::string("error"));
  if (!scenario.contains("sut")) return verdict;
  return verdict + " (" + scenario.at("sut").value("verdict", std::string("error")) + ")";
}

std::vector<std::pair<std::string, std::string>> program_lines(const json& scenario) {
  std::vector<std::pair<std::string, std::string>> lines;
  if (!scenario.contains("sut")) return lines;
  const json roles = scenario.at("sut").value("roles", json::object());
  for (const auto& role : scenario.value("agents", json::object()).value("ranks", json::array())) {
    const std::string name = role.get<std::string>();
    if (!roles.contains(name)) continue;
    const json& ended = roles.at(name);
    char figures[160];
    std::snprintf(figures, sizeof figures, "after %.2f s, %d fault(s) applied",
                  ended.value("seconds", 0.0), ended.value("faults_applied", 0));
    std::string text = ended.value("verdict", std::string("error")) + ": ";
    if (ended.value("exit_code", json()).is_number()) {
      text += "exit " + std::to_string(ended.at("exit_code").get<int>()) + " ";
    } else if (ended.value("signal", json()).is_number()) {
      text += "signal " + std::to_string(ended.at("signal").get<int>()) + " ";
    }
    text += figures;
    if (const json since = ended.value("fault_to_error_ms", json()); since.is_number()) {
      std::snprintf(figures, sizeof figures, ", its first error line %.1f ms after the fault",
                    since.get<double>());
      text += figures;
    }
    if (const std::string evidence = ended.value("evidence", std::string()); !evidence.empty())
      text += "\n" + evidence;
    if (const json bypass = ended.value("bypass", json::array()); !bypass.empty())
      text += "\nwent around the interposer: " + bypass.dump();
    if (const std::string hint = ended.value("hint", std::string()); !hint.empty())
      text += "\nhint: " + hint;
    lines.emplace_back(name, text);
  }
  return lines;
}

std::string suite_name(const json& report) {
  const std::string suite = report.value("run", json::object()).value("suite", std::string());
  return suite.empty() ? "selection" : suite;
}

std::map<std::string, int> verdict_counts(const json& report) {
  std::map<std::string, int> counts;
  for (const auto& scenario : report.value("scenarios", json::array()))
    ++counts[scenario.value("verdict", std::string("error"))];
  return counts;
}

std::string target_label(const json& report) {
  const json run = report.value("run", json::object());
  std::string label = run.value("transport", std::string("?"));
  const std::string provider = run.value("provider", std::string());
  const std::string device = run.value("device", std::string());
  if (!provider.empty()) label += "/" + provider;
  if (!device.empty()) label += " on " + device;
  return label;
}

std::string seconds(const json& scenario) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", scenario.value("duration_ms", 0.0) / 1000);
  return text;
}

std::vector<std::pair<std::string, std::string>> device_evidence(const json& scenario) {
  std::vector<std::pair<std::string, std::string>> lines;
  const json sides = scenario.value("sides", json::object());
  for (const auto& [agent, side] : sides.items()) {
    const json details = side.value("details", json::object());
    std::string errors;
    const json traffic = details.value("traffic", json::object());
    const json completions = traffic.value("completions", json::object());
    for (const auto& [status, count] : completions.items()) {
      if (status == "SUCCESS") continue;
      errors += (errors.empty() ? "" : ", ") + status + " " + count.dump();
    }
    if (!errors.empty()) lines.emplace_back("completion errors (" + agent + ")", errors);
    const json counters = details.value("port_counters", json());
    if (!counters.is_object()) continue;
    std::string grown;
    const json grown_counters = counters.value("grown", json::object());
    for (const auto& [counter, amount] : grown_counters.items())
      grown += (grown.empty() ? "" : ", ") + counter + " +" + amount.dump();
    if (!grown.empty()) {
      lines.emplace_back("port counters (" + agent + ": " + counters.value("device", "") +
                             " port " + counters.value("port", json(0)).dump() + ")",
                         grown);
    }
  }
  return lines;
}

std::map<std::string, std::string> agent_labels(const json& report) {
  std::map<std::string, std::string> labels;
  const json run = report.value("run", json::object());
  for (const auto& agent : run.value("agents", json::array())) {
    const std::string id = agent.value("id", std::string());
    const std::string name = agent.value("name", id);
    const std::string host = agent.value("host", std::string());
    labels[id] = name == host || host.empty() ? name : name + " (" + host + ")";
  }
  return labels;
}

std::string agent_label(const std::map<std::string, std::string>& labels, const std::string& id) {
  const auto found = labels.find(id);
  return found == labels.end() ? id : found->second;
}

int reading_order(const std::string& verdict) {
  if (verdict == "fail" || verdict == "crashed" || verdict == "timeout") return 0;
  if (verdict == "error") return 1;
  if (verdict == "skip" || verdict == "xfail") return 2;
  return 3;
}

PairMatrix pair_matrix(const json& report) {
  const auto labels = agent_labels(report);
  std::set<std::string> agents;
  PairMatrix matrix;
  for (const auto& scenario : report.value("scenarios", json::array())) {
    const json ranks = scenario.value("agents", json::object()).value("ranks", json::array());
    if (ranks.size() != 2 || scenario.contains("sut")) continue;
    // By name (unique among the agents), so the matrix reads the same from run to run.
    const std::string a = agent_label(labels, ranks[0]);
    const std::string b = agent_label(labels, ranks[1]);
    agents.insert(a);
    agents.insert(b);
    const std::string verdict = scenario.value("verdict", std::string("error"));
    for (const auto& key : {std::pair{a, b}, std::pair{b, a}}) {
      PairCell& cell = matrix.cells[key];
      ++cell.runs;
      ++cell.verdicts[verdict];
      if (cell.worst.empty() || reading_order(verdict) < reading_order(cell.worst))
        cell.worst = verdict;
    }
  }
  if (agents.size() < 3) return {};
  matrix.agents.assign(agents.begin(), agents.end());
  return matrix;
}

}  // namespace faultline::reports
