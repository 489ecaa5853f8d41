// L3 and L4: scenarios of the catalog (their expectations are what a conformant device and a
// conformant protocol give), on a local pair of agents, with the injected faults in every role.
#include <sstream>

#include "faultline/harness/runs/report_reader.hpp"
#include "faultline/harness/scenario/scenario_catalog.hpp"
#include "layers.hpp"

namespace faultline::harness::diagnose {

namespace {

const char* const kKnownBehaviour = "/excludes/known-provider-behaviour.json";

ProbeResult catalog_problem(const std::vector<LoadProblem>& problems) {
  return {
      "scenario catalog",
      ProbeVerdict::kFail,
      "the scenarios load",
      problems.front().describe() +
          (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""),
      "",
      "fix the scenario files, or point --scenario-dir at a good catalog"};
}

// Every role of the scenario gets each injected fault.
void inject_into(ScenarioSpec& spec, const nlohmann::json& faults) {
  if (faults.empty() || !spec.document.is_object()) return;
  nlohmann::json& list = spec.document["faults"];
  if (!list.is_array()) list = nlohmann::json::array();
  const nlohmann::json roles = spec.document.value("roles", nlohmann::json::object());
  for (const auto& [role, unused] : roles.items()) {
    for (auto fault : faults) {
      fault["role"] = role;
      list.push_back(std::move(fault));
    }
  }
}

ProbeResult probe_of(const nlohmann::json& scenario) {
  const std::string verdict = scenario.value("verdict", "error");
  ProbeResult probe{scenario.value("id", ""),
                    ProbeVerdict::kPass,
                    scenario.value("title", std::string("the scenario passes")),
                    verdict,
                    scenario.value("evidence", ""),
                    scenario.value("hint", "")};
  if (verdict == "xfail") {
    probe.observed = "known deviation of this provider: " + scenario.value("evidence", "");
  } else if (verdict == "skip") {
    probe.verdict = ProbeVerdict::kSkip;
    probe.observed = scenario.value("observed", "skipped");
  } else if (verdict != "pass") {
    probe.verdict = ProbeVerdict::kFail;
    probe.expected = scenario.value("expected", "");
    probe.observed = verdict + ": " + scenario.value("observed", "");
  }
  return probe;
}

}  // namespace

std::vector<ProbeResult> probe_scenarios(const DiagnoseOptions& options,
                                         const nlohmann::json& inject_faults,
                                         const std::vector<std::string>& scenario_ids,
                                         const std::string& report_subdir,
                                         const AgentSource& agents) {
  std::vector<LoadProblem> problems;
  const auto catalog = ScenarioCatalog::load(
      options.scenario_dir.empty() ? default_scenario_dir() : options.scenario_dir, problems);
  std::vector<ExcludeEntry> excludes;
  auto chosen = catalog.resolve("", scenario_ids, excludes, problems);
  const auto known = load_exclude_file(catalog.directory() + kKnownBehaviour, problems);
  if (!problems.empty()) return {catalog_problem(problems)};
  apply_excludes(chosen, known);
  for (auto& spec : chosen) inject_into(spec, inject_faults);

  auto pair = agents();
  if (!pair.ok()) {
    return {{"agents", ProbeVerdict::kFail, "two agents join to run the scenarios",
             pair.error().describe(), "", pair.error().hint}};
  }
  const std::string report_dir = options.report_dir + "/" + report_subdir;
  std::ostringstream progress;  // the layer's line says what matters
  const RunMetadata metadata{"diagnose " + report_subdir, options.target, 1, false};
  const int code = pair.value()->run(chosen, report_dir, metadata, progress, options.metrics);
  auto report = read_report(report_dir + "/report.json");
  if (!report.ok()) {
    return {{"local agents", ProbeVerdict::kFail, "two local agents run the scenarios",
             "the run ended with exit code " + std::to_string(code) + " and no report",
             report.error().describe(), "see the errors above; the agents could not start"}};
  }
  std::vector<ProbeResult> probes;
  for (const auto& scenario : report->at("scenarios")) probes.push_back(probe_of(scenario));
  return probes;
}

}  // namespace faultline::harness::diagnose
