#include "faultline/reports/report_view.hpp"

#include <cstdio>

namespace faultline::reports {

using nlohmann::json;

std::string agents_label(const json& scenario) {
  const json agents = scenario.value("agents", json::object());
  const json ranks = agents.value("ranks", json::array());
  if (ranks.size() <= 2) {
    return agents.value("initiator", std::string("?")) + " <-> " +
           agents.value("responder", std::string("?"));
  }
  return "ring of " + std::to_string(ranks.size()) + " (" + ranks.front().get<std::string>() +
         ".." + ranks.back().get<std::string>() + ")";
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

}  // namespace faultline::reports
