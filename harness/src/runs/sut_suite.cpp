#include "faultline/harness/runs/sut_suite.hpp"

#include <algorithm>
#include <filesystem>
#include <ostream>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/base/metrics_plan.hpp"
#include "faultline/harness/runs/report_document.hpp"
#include "faultline/reports/directory_lock.hpp"
#include "faultline/reports/metrics.hpp"
#include "faultline/reports/report_sink.hpp"

namespace faultline::harness::sut {

namespace {

using nlohmann::json;

std::vector<std::string> scenario_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(path, error))
      if (entry.path().extension() == ".json") found.push_back(entry.path().string());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

}  // namespace

Result<std::vector<SutScenario>> load_sut_scenarios(const std::vector<std::string>& paths,
                                                    const std::string& needs) {
  std::vector<SutScenario> scenarios;
  for (const auto& file : scenario_files(paths)) {
    auto scenario = load_sut_scenario(file);
    if (!scenario.ok()) return std::move(scenario).take_error();
    if (needs.empty() || ("," + needs + ",").find("," + scenario->needs + ",") != std::string::npos)
      scenarios.push_back(std::move(scenario).value());
  }
  return scenarios;
}

int run_sut_suite(const std::vector<SutScenario>& scenarios, const SutSuiteSettings& settings,
                  std::ostream& out, std::ostream& err) {
  // Two runs in one directory would mix their files: the second is refused.
  auto lock = reports::DirectoryLock::acquire(settings.report_dir);
  if (!lock.ok()) {
    err << "faultline sut: " << lock.error().describe_with_hint() << "\n";
    return kExitUsage;
  }
  const std::string device = verbs_device();
  const transports::Target target{"sut", "", device};
  ReportDocument document(
      settings.agents.is_null() ? this_machine_as_agent(target) : settings.agents,
      {settings.suite, target, 0, false}, scenarios.size());
  auto sinks = reports::report_directory_sinks(settings.report_dir);
  if (settings.metrics != nullptr) {
    std::vector<std::string> ids;
    ids.reserve(scenarios.size());
    for (const auto& scenario : scenarios) ids.push_back(scenario.name);
    sinks.push_back(std::make_unique<reports::MetricsSink>(
        *settings.metrics, metrics_plan(ids, role_verdict_names())));
  }
  // A report that cannot be written ends the run: nothing it measures would be kept.
  auto failed_write = [&](const Status& status) {
    if (status.ok()) return false;
    err << "faultline sut: " << status.error().describe_with_hint() << "\n";
    return true;
  };
  for (auto& sink : sinks)
    if (failed_write(sink->on_run_started(document.json()))) return kExitHarnessError;
  bool all_as_expected = true;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const SutScenario& scenario = scenarios[i];
    auto outcome =
        settings.run_scenario
            ? settings.run_scenario(scenario)
            : run_sut_scenario(scenario, {settings.faultline_binary, settings.report_dir});
    if (!outcome.ok()) {
      err << "faultline sut: " << scenario.name << ": " << outcome.error().describe_with_hint()
          << "\n";
      return kExitHarnessError;
    }
    all_as_expected = all_as_expected && (outcome->result == "pass" || outcome->result == "skip");
    out << "[" << i + 1 << "/" << scenarios.size() << "] " << outcome->result << "  "
        << scenario.name << "  (" << (outcome->verdict.empty() ? "-" : outcome->verdict)
        << ", expected " << scenario.expect << ")"
        << (outcome->reason.empty() ? "" : "\n    " + outcome->reason) << std::endl;
    const json& added = document.add(outcome->to_report_scenario(i));
    for (auto& sink : sinks)
      if (failed_write(sink->on_scenario_finished(added, document.json())))
        return kExitHarnessError;
  }
  for (auto& sink : sinks)
    if (failed_write(sink->on_run_finished(document.json()))) return kExitHarnessError;
  out << "report: " << settings.report_dir << "/report.json" << std::endl;
  return all_as_expected ? 0 : 1;
}

}  // namespace faultline::harness::sut
