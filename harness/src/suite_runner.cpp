#include "faultline/harness/suite_runner.hpp"

#include <sys/utsname.h>
#include <unistd.h>
#include <algorithm>

#include <chrono>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "faultline/harness/exit_codes.hpp"
#include "faultline/reports/atomic_file.hpp"

namespace faultline::harness {

namespace {

using transports::Error;
using transports::ErrorCode;

std::string now_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string kernel_release() {
  utsname name{};
  uname(&name);
  return std::string(name.sysname) + " " + name.release;
}

// "agent-1 <-> agent-2" for a pair, "ring of 4 (agent-1..agent-4)" for a ring.
std::string who(const ScenarioRun& run) {
  if (run.agents.size() <= 2) return run.initiator + " <-> " + run.responder;
  return "ring of " + std::to_string(run.agents.size()) + " (" + run.agents.front() + ".." +
         run.agents.back() + ")";
}

nlohmann::json run_to_json(const ScenarioRun& run) {
  return {{"id", run.scenario},
          {"tags", run.tags},
          {"source", run.source},
          {"sha256", run.sha256},
          {"seed", run.seed},
          {"run_id", run.run_id},
          {"round", run.round},
          {"agents",
           {{"initiator", run.initiator}, {"responder", run.responder}, {"ranks", run.agents}}},
          {"verdict", to_string(run.verdict)},
          {"expected", run.expected},
          {"observed", run.observed},
          {"evidence", run.evidence},
          {"hint", run.hint},
          {"duration_ms", run.duration_ms},
          {"sides", run.sides}};
}

// Prints progress and rewrites report.json after every finished run.
class Reporter final : public RunObserver {
 public:
  Reporter(Coordinator& coordinator, std::string report_dir, const RunMetadata& metadata,
           size_t total, std::ostream& out)
      : coordinator_(coordinator),
        report_path_(std::move(report_dir) + "/report.json"),
        metadata_(metadata),
        total_(total),
        out_(out),
        live_(&out == &std::cout && isatty(STDOUT_FILENO) != 0),
        started_at_(now_utc()) {}

  void run_started(const ScenarioRun& run) override {
    if (live_) show_live(run, "starting");
  }
  void step(const ScenarioRun& run, const std::string& agent, const std::string& step) override {
    if (live_) show_live(run, agent + ": " + step);
  }
  void run_finished(const ScenarioRun& run) override {
    finished_.push_back(run);
    if (live_) out_ << "\r\033[K";
    out_ << "[" << std::setw(3) << finished_.size() << "/" << total_ << "] " << std::left
         << std::setw(40) << run.scenario << std::right << " " << who(run) << "  "
         << to_string(run.verdict) << " (" << std::fixed << std::setprecision(2)
         << run.duration_ms / 1000 << " s)";
    if (run.verdict != Verdict::kPass) out_ << ": " << run.observed;
    out_ << std::endl;
    (void)write_report();  // a write failure is logged; the run goes on
  }

  transports::Status write_report() const {
    nlohmann::json agents = nlohmann::json::array();
    for (const auto& agent : coordinator_.agents()) {
      agents.push_back({{"id", agent.id},
                        {"host", agent.host},
                        {"pid", agent.pid},
                        {"remote", agent.remote},
                        {"lost", agent.lost},
                        {"lost_reason", agent.lost_reason},
                        {"target", agent.hello.value("target", nlohmann::json::object())},
                        {"devices", agent.hello.value("devices", nlohmann::json::array())}});
    }
    std::map<std::string, int> counts;
    nlohmann::json scenarios = nlohmann::json::array();
    for (const auto& run : finished_) {
      ++counts[std::string(to_string(run.verdict))];
      scenarios.push_back(run_to_json(run));
    }
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    const nlohmann::json report = {
        {"schema_version", 1},
        {"faultline_version", FAULTLINE_VERSION},
        {"run",
         {{"suite", metadata_.suite},
          {"started_at", started_at_},
          {"updated_at", now_utc()},
          {"complete", finished_.size() == total_},
          {"host", host},
          {"kernel", kernel_release()},
          {"transport", metadata_.target.transport},
          {"provider", metadata_.target.provider},
          {"device", metadata_.target.device},
          {"seed", metadata_.seed},
          {"strict", metadata_.strict},
          {"agents", agents}}},
        {"summary", {{"total", total_}, {"finished", finished_.size()}, {"verdicts", counts}}},
        {"scenarios", scenarios}};
    auto written = reports::write_file_atomically(report_path_, report.dump(2) + "\n");
    if (!written.ok())
      std::cerr << "faultline: cannot write the report: " << written.error().describe() << "\n";
    return written;
  }

  const std::vector<ScenarioRun>& finished() const { return finished_; }
  const std::string& report_path() const { return report_path_; }

 private:
  void show_live(const ScenarioRun& run, const std::string& what) {
    out_ << "\r\033[K[" << std::setw(3) << finished_.size() + 1 << "/" << total_ << "] "
         << run.scenario << " " << who(run) << ": " << what << std::flush;
  }

  Coordinator& coordinator_;
  std::string report_path_;
  RunMetadata metadata_;
  size_t total_;
  std::ostream& out_;
  bool live_;
  std::string started_at_;
  std::vector<ScenarioRun> finished_;
};

void print_summary(const std::vector<ScenarioRun>& runs, const std::string& report_path,
                   std::ostream& out) {
  std::map<std::string, int> counts;
  // Columns as wide as their longest entry, so a long id never runs into the next column.
  size_t scenario_width = 44;
  size_t agents_width = 22;
  for (const auto& run : runs) {
    scenario_width = std::max(scenario_width, run.scenario.size() + 2);
    agents_width = std::max(agents_width, who(run).size() + 2);
  }
  const auto scenario_w = static_cast<int>(scenario_width);
  const auto agents_w = static_cast<int>(agents_width);
  out << "\n"
      << std::left << std::setw(scenario_w) << "SCENARIO" << std::setw(agents_w) << "AGENTS"
      << std::setw(9) << "VERDICT" << std::right << std::setw(10) << "SECONDS"
      << "\n";
  for (const auto& run : runs) {
    ++counts[std::string(to_string(run.verdict))];
    out << std::left << std::setw(scenario_w) << run.scenario << std::setw(agents_w) << who(run)
        << std::setw(9) << to_string(run.verdict) << std::right << std::setw(10) << std::fixed
        << std::setprecision(2) << run.duration_ms / 1000 << "\n";
  }
  out << "\n" << runs.size() << " scenario runs:";
  for (const auto& [verdict, count] : counts) out << " " << count << " " << verdict;
  out << "\nreport: " << report_path << "\n";
  for (const auto& run : runs) {
    if (run.verdict == Verdict::kPass) continue;
    out << "\n"
        << run.scenario << " (" << who(run) << "): " << to_string(run.verdict)
        << "\n  expected: " << run.expected << "\n  observed: " << run.observed
        << "\n  evidence: " << run.evidence;
    if (!run.hint.empty()) out << "\n  hint: " << run.hint;
    out << "\n";
  }
}

}  // namespace

int run_suite(Coordinator& coordinator, const std::vector<ScenarioSpec>& scenarios,
              const std::string& report_dir, const RunMetadata& metadata, std::ostream& out) {
  const size_t agents = coordinator.agents().size();
  const size_t pairs = agents * (agents - 1) / 2;
  size_t total = 0;
  for (const auto& scenario : scenarios) total += scenario.topology == "ring" ? 1 : pairs;
  Reporter reporter(coordinator, report_dir, metadata, total, out);
  if (auto written = reporter.write_report(); !written.ok()) return kExitUsage;
  const auto runs = coordinator.run(scenarios, {metadata.seed, metadata.strict}, reporter);
  print_summary(runs, reporter.report_path(), out);
  bool harness_error = false;
  bool conformance_failure = false;
  for (const auto& run : runs) {
    harness_error = harness_error || run.verdict == Verdict::kError;
    conformance_failure = conformance_failure || !is_success(run.verdict);
  }
  if (harness_error) return kExitHarnessError;
  return conformance_failure ? kExitConformanceFailure : kExitPass;
}

}  // namespace faultline::harness
