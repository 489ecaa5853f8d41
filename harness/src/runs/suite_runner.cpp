#include "faultline/harness/runs/suite_runner.hpp"

#include <unistd.h>
#include <algorithm>

#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/base/labels.hpp"
#include "faultline/harness/base/live_line.hpp"
#include "faultline/harness/base/metrics_plan.hpp"
#include "faultline/harness/runs/report_document.hpp"
#include "faultline/reports/directory_lock.hpp"
#include "faultline/reports/metrics.hpp"
#include "faultline/reports/report_sink.hpp"
#include "faultline/reports/report_view.hpp"

namespace faultline::harness {

namespace {

using AgentLabels = std::map<std::string, std::string>;

// The run's agents by name ("rack1-a <-> rack2-b"), as every report file names them.
std::string who(const ScenarioRun& run, const AgentLabels& labels) {
  return reports::agents_label(scenario_to_json(run), labels);
}

// Prints progress and feeds the report sinks (report.json, junit.xml, summary.md) after every
// finished run.
class Reporter final : public RunObserver {
 public:
  Reporter(Coordinator& coordinator, const std::string& report_dir, const RunMetadata& metadata,
           const std::vector<ScenarioSpec>& scenarios, size_t total, std::ostream& out,
           reports::Metrics* metrics)
      : document_(coordinator, metadata, total),
        sinks_(reports::report_directory_sinks(report_dir)),
        report_path_(report_dir + "/report.json"),
        total_(total),
        out_(out),
        live_(&out == &std::cout && isatty(STDOUT_FILENO) != 0),
        metrics_(metrics),
        labels_(reports::agent_labels(document_.json())) {
    // The id column as wide as the longest id, so the agents and verdicts stay in line.
    for (const auto& scenario : scenarios) id_width_ = std::max(id_width_, scenario.id.size() + 1);
    if (metrics == nullptr) return;
    std::vector<std::string> ids;
    ids.reserve(scenarios.size());
    for (const auto& scenario : scenarios) ids.push_back(scenario.id);
    sinks_.push_back(std::make_unique<reports::MetricsSink>(*metrics, metrics_plan(ids)));
  }

  // Writes the empty report; a failure here (an unwritable directory) stops the run.
  Status start() {
    for (auto& sink : sinks_) FAULTLINE_RETURN_IF_ERROR(sink->on_run_started(document_.json()));
    return {};
  }

  void run_started(const ScenarioRun& run) override {
    if (live_) show_live(run, "starting");
    for (auto& sink : sinks_) sink->on_scenario_started(scenario_to_json(run));
  }
  void step(const ScenarioRun& run, const std::string& agent, const std::string& step) override {
    if (live_) show_live(run, reports::agent_label(labels_, agent) + ": " + step);
    for (auto& sink : sinks_) sink->on_step_finished(scenario_to_json(run), agent, step);
  }
  void agent_lost(const AgentRecord& agent) override {
    if (metrics_ == nullptr) return;
    metrics_->set_agent_up(agent.name, false);
    metrics_->count_agent_lost();
  }
  void run_finished(const ScenarioRun& run) override {
    finished_.push_back(run);
    // Into the reports first: a run the console shows as finished is in every file.
    const nlohmann::json& scenario = document_.add(run);
    last_write_failed_ = false;
    for (auto& sink : sinks_) {
      // A write failure is said once; the run goes on.
      report_failure(sink->on_scenario_finished(scenario, document_.json()));
    }
    if (live_) clear_live_line();
    out_ << "[" << std::setw(3) << finished_.size() << "/" << total_ << "] " << std::left
         << std::setw(static_cast<int>(id_width_)) << run.scenario << std::right << " "
         << who(run, labels_) << "  " << to_string(run.verdict) << " (" << std::fixed
         << std::setprecision(2) << run.duration_ms / 1000 << " s)";
    if (run.verdict != Verdict::kPass) out_ << ": " << run.observed;
    out_ << std::endl;
  }

  void finish() {
    last_write_failed_ = false;
    for (auto& sink : sinks_) report_failure(sink->on_run_finished(document_.json()));
  }

  const std::vector<ScenarioRun>& finished() const { return finished_; }
  /// Whether the report files miss what the run did: their last write failed.
  bool report_incomplete() const { return last_write_failed_; }
  size_t write_failures() const { return write_failures_; }
  const std::string& report_path() const { return report_path_; }
  const AgentLabels& labels() const { return labels_; }

 private:
  // A failed write is said once; the files keep their last good version (written atomically),
  // later writes are still tried, and the run ends as a harness error unless the last worked.
  void report_failure(const Status& status) {
    if (status.ok()) return;
    last_write_failed_ = true;
    if (write_failures_++ == 0) {
      write_error_line("faultline: cannot write the report: " + status.error().describe() +
                       "; the report files keep their last good version, and the run will end "
                       "with exit 3 unless a later write succeeds");
    }
  }
  void show_live(const ScenarioRun& run, const std::string& what) {
    std::ostringstream line;
    line << "[" << std::setw(3) << finished_.size() + 1 << "/" << total_ << "] " << run.scenario
         << " " << who(run, labels_) << ": " << what;
    show_live_line(line.str());
  }

  ReportDocument document_;
  std::vector<std::unique_ptr<reports::ReportSink>> sinks_;
  std::string report_path_;
  size_t total_;
  std::ostream& out_;
  bool live_;
  reports::Metrics* metrics_;
  std::vector<ScenarioRun> finished_;
  AgentLabels labels_;
  size_t id_width_ = 40;
  size_t write_failures_ = 0;
  bool last_write_failed_ = false;
};

// The run's hold on its report directory; nullopt, said on stderr, when another run has it.
std::optional<reports::DirectoryLock> lock_report_dir(const std::string& report_dir) {
  auto lock = reports::DirectoryLock::acquire(report_dir);
  if (lock.ok()) return std::move(lock).value();
  std::cerr << "faultline: " << lock.error().describe_with_hint() << "\n";
  return std::nullopt;
}

// Why a run was skipped, without the "AGENT (role): " its side's words begin with, so one
// reason on many pairs reads as one.
// Read by hand, not by std::regex, whose matcher recurses once per character (a 200,000-letter
// word overflowed the stack).
std::string skip_reason(const ScenarioRun& run) {
  const std::string& text = run.observed;
  const size_t name_end = text.find(" (");
  if (name_end == 0 || name_end == std::string::npos || !is_agent_label(text.substr(0, name_end)))
    return text;
  const size_t role_end = text.find("): ", name_end);
  if (role_end == std::string::npos) return text;
  const std::string role = text.substr(name_end + 2, role_end - name_end - 2);
  const bool rank = role.size() > 5 && role.rfind("rank ", 0) == 0 &&
                    role.find_first_not_of("0123456789", 5) == std::string::npos;
  if (role != "initiator" && role != "responder" && !rank) return text;
  return text.substr(role_end + 3);
}

void print_summary(const std::vector<ScenarioRun>& runs, const AgentLabels& labels,
                   const std::string& report_path, std::ostream& out) {
  std::map<std::string, int> counts;
  // Columns as wide as their longest entry, so a long id never runs into the next column.
  size_t scenario_width = 44;
  size_t agents_width = 22;
  for (const auto& run : runs) {
    scenario_width = std::max(scenario_width, run.scenario.size() + 2);
    agents_width = std::max(agents_width, who(run, labels).size() + 2);
  }
  const auto scenario_w = static_cast<int>(scenario_width);
  const auto agents_w = static_cast<int>(agents_width);
  out << "\n"
      << std::left << std::setw(scenario_w) << "SCENARIO" << std::setw(agents_w) << "AGENTS"
      << std::setw(9) << "VERDICT" << std::right << std::setw(10) << "SECONDS"
      << "\n";
  for (const auto& run : runs) {
    ++counts[std::string(to_string(run.verdict))];
    out << std::left << std::setw(scenario_w) << run.scenario << std::setw(agents_w)
        << who(run, labels) << std::setw(9) << to_string(run.verdict) << std::right << std::setw(10)
        << std::fixed << std::setprecision(2) << run.duration_ms / 1000 << "\n";
  }
  out << "\n" << runs.size() << " scenario runs:";
  for (const auto& [verdict, count] : counts) out << " " << count << " " << verdict;
  out << "\nreport: " << report_path << "\n";
  // Skips are told once per reason, with how many and which (a suite over the wrong transport
  // skips dozens of runs for one reason); the other verdicts run by run.
  std::map<std::string, std::vector<const ScenarioRun*>> skipped;
  for (const auto& run : runs)
    if (run.verdict == Verdict::kSkip) skipped[skip_reason(run)].push_back(&run);
  for (const auto& [reason, which] : skipped) {
    out << "\n" << which.size() << " skipped: " << reason << "\n  ";
    for (size_t i = 0; i < which.size() && i < 3; ++i)
      out << (i == 0 ? "" : ", ") << which[i]->scenario << " (" << who(*which[i], labels) << ")";
    if (which.size() > 3) out << " and " << which.size() - 3 << " more";
    out << "\n";
  }
  for (const auto& run : runs) {
    if (run.verdict == Verdict::kPass || run.verdict == Verdict::kSkip) continue;
    out << "\n" << run.scenario << " (" << who(run, labels) << "): " << to_string(run.verdict);
    // A skip has no expectation or evidence: no empty lines for them.
    for (const auto& [label, text] :
         {std::pair{"expected", &run.expected}, std::pair{"observed", &run.observed},
          std::pair{"evidence", &run.evidence}, std::pair{"hint", &run.hint}})
      if (!text->empty()) out << "\n  " << label << ": " << *text;
    out << "\n";
  }
}

}  // namespace

int run_suite(Coordinator& coordinator, const std::vector<ScenarioSpec>& scenarios,
              const std::string& report_dir, const RunMetadata& metadata, std::ostream& out,
              reports::Metrics* metrics) {
  const size_t total = coordinator.planned_runs(scenarios, metadata.seed);
  const auto lock = lock_report_dir(report_dir);
  if (!lock) return kExitUsage;
  RunMetadata as_run = metadata;
  as_run.target = coordinator.agents_target();  // what the agents run on, not what was asked
  Reporter reporter(coordinator, report_dir, as_run, scenarios, total, out, metrics);
  if (auto written = reporter.start(); !written.ok()) {
    std::cerr << "faultline: cannot write the report: " << written.error().describe() << "\n";
    return kExitUsage;
  }
  const std::string suite = metadata.suite.empty() ? "selection" : metadata.suite;
  const auto runs = coordinator.run(scenarios, {metadata.seed, metadata.strict, suite}, reporter);
  reporter.finish();
  print_summary(runs, reporter.labels(), reporter.report_path(), out);
  out.flush();  // the process may linger (serving metrics) before it exits
  bool harness_error = false;
  bool conformance_failure = false;
  for (const auto& run : runs) {
    harness_error = harness_error || run.verdict == Verdict::kError;
    conformance_failure = conformance_failure || !is_success(run.verdict);
  }
  if (reporter.report_incomplete()) {
    std::cerr << "faultline: the report is incomplete: " << reporter.write_failures()
              << " write(s) failed, the last one too (exit 3)\n";
    return kExitHarnessError;
  }
  if (harness_error) return kExitHarnessError;
  return conformance_failure ? kExitConformanceFailure : kExitPass;
}

int report_nothing_ran(const Coordinator& coordinator, const std::vector<ScenarioSpec>& scenarios,
                       const std::string& report_dir, const RunMetadata& metadata,
                       const std::string& why) {
  const auto lock = lock_report_dir(report_dir);
  if (!lock) return kExitUsage;
  ReportDocument document(coordinator, metadata, scenarios.size());
  document.set_not_run(why);
  for (auto& sink : reports::report_directory_sinks(report_dir)) {
    if (auto written = sink->on_run_finished(document.json()); !written.ok())
      std::cerr << "faultline: cannot write the report: " << written.error().describe() << "\n";
  }
  return kExitHarnessError;
}

}  // namespace faultline::harness
