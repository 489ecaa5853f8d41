#include "faultline/reports/report_view.hpp"

#include <set>

#include <algorithm>
#include <cstdio>

namespace faultline::reports {

using nlohmann::json;

std::string agents_label(const json& scenario, const std::map<std::string, std::string>& labels) {
  const json agents = scenario.value("agents", json::object());
  const json ranks = agents.value("ranks", json::array());
  const json tags = scenario.value("tags", json::array());
  if (std::find(tags.begin(), tags.end(), "sut") != tags.end()) {
    std::string roles;
    for (const auto& role : ranks) roles += (roles.empty() ? "" : ", ") + role.get<std::string>();
    return roles;
  }
  if (ranks.size() <= 2) {
    return agent_label(labels, agents.value("initiator", std::string("?"))) + " <-> " +
           agent_label(labels, agents.value("responder", std::string("?")));
  }
  return "ring of " + std::to_string(ranks.size()) + " (" +
         agent_label(labels, ranks.front().get<std::string>()) + ".." +
         agent_label(labels, ranks.back().get<std::string>()) + ")";
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

std::vector<std::pair<std::string, std::string>> device_evidence(
    const json& scenario, const std::map<std::string, std::string>& labels) {
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
    if (!errors.empty())
      lines.emplace_back("completion errors (" + agent_label(labels, agent) + ")", errors);
    const json counters = details.value("port_counters", json());
    if (!counters.is_object()) continue;
    std::string grown;
    const json grown_counters = counters.value("grown", json::object());
    for (const auto& [counter, amount] : grown_counters.items())
      grown += (grown.empty() ? "" : ", ") + counter + " +" + amount.dump();
    if (!grown.empty()) {
      lines.emplace_back("port counters (" + agent_label(labels, agent) + ": " +
                             counters.value("device", "") + " port " +
                             counters.value("port", json(0)).dump() + ")",
                         grown);
    }
  }
  return lines;
}

std::map<std::string, std::string> agent_labels(const json& report) {
  std::map<std::string, std::string> labels;
  const json run = report.value("run", json::object());
  // The run's own host is said once, in the report's header.
  const std::string own_host = run.value("host", std::string());
  for (const auto& agent : run.value("agents", json::array())) {
    const std::string id = agent.value("id", std::string());
    const std::string name = agent.value("name", id);
    const std::string host = agent.value("host", std::string());
    labels[id] = name == host || host.empty() || host == own_host ? name : name + " (" + host + ")";
  }
  return labels;
}

std::map<std::string, std::string> agent_names(const json& report) {
  std::map<std::string, std::string> names;
  for (const auto& agent : report.value("run", json::object()).value("agents", json::array())) {
    const std::string id = agent.value("id", std::string());
    names[id] = agent.value("name", id);
  }
  return names;
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

std::string duration_words(double seconds) {
  char text[32];
  if (seconds >= 1)
    std::snprintf(text, sizeof text, "%.2f s", seconds);
  else if (seconds >= 1e-3)
    std::snprintf(text, sizeof text, "%.2f ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof text, "%.1f us", seconds * 1e6);
  return text;
}

MonitorView monitor_view(const nlohmann::json& report) {
  MonitorView view;
  const nlohmann::json monitor = report.value("monitor", nlohmann::json());
  if (!monitor.is_object()) return view;
  const auto text = [](const nlohmann::json& object, const char* key) {
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>() : "";
  };
  const auto seconds_at = [](const nlohmann::json& object, const char* key) {
    const auto found = object.find(key);
    return found != object.end() && found->is_number() ? duration_words(found->get<double>())
                                                       : std::string("-");
  };
  std::map<std::string, int> states;
  for (const auto& pair : monitor.value("pairs", nlohmann::json::array()))
    if (pair.is_object()) ++states[text(pair, "state")];
  const nlohmann::json agents = monitor.value("agents", nlohmann::json::array());
  view.summary = "round " + monitor.value("round", nlohmann::json(0)).dump() + " at " +
                 text(monitor, "started_at") + ": " + std::to_string(agents.size()) + " agents, " +
                 std::to_string(monitor.value("pairs", nlohmann::json::array()).size()) + " pairs";
  std::string counts;
  for (const auto& [state, count] : states)
    counts += (counts.empty() ? "" : ", ") + std::to_string(count) + " " + state;
  if (!counts.empty()) view.summary += " (" + counts + ")";
  view.summary += "; median round trip " + seconds_at(monitor, "median_rtt_seconds");
  if (!text(monitor, "note").empty()) view.summary += "; " + text(monitor, "note");
  for (const auto& suspect : monitor.value("suspects", nlohmann::json::array())) {
    if (!suspect.is_object()) continue;
    view.suspects.push_back({text(suspect, "kind"), text(suspect, "name"), text(suspect, "reason"),
                             text(suspect, "evidence")});
  }
  for (const auto& agent : agents) {
    if (!agent.is_object()) continue;
    const auto count = [&agent](const char* key) {
      return agent.value(key, nlohmann::json(0)).is_number_unsigned()
                 ? agent.at(key).get<uint64_t>()
                 : uint64_t{0};
    };
    const uint64_t pairs = count("pairs");
    const uint64_t failed = count("failed");
    const uint64_t slow = count("slow");
    view.agents.push_back(
        {text(agent, "name") + (agent.value("suspect", false) ? " (suspect)" : ""),
         text(agent, "rail"),
         std::to_string(pairs >= failed + slow ? pairs - failed - slow : 0) + "/" +
             std::to_string(slow) + "/" + std::to_string(failed),
         seconds_at(agent, "rtt_p50_seconds"), seconds_at(agent, "rtt_p99_seconds")});
  }
  return view;
}

}  // namespace faultline::reports
