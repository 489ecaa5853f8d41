// A sweep's report directory: each point a scenario of report.json (so junit.xml has a testcase
// per point and the metrics count it), and the `sweep` section the summary and HTML draw the
// matrix from; rewritten after every point.
#include <algorithm>
#include <memory>
#include <set>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/base/strict_json.hpp"
#include "faultline/harness/runs/report_document.hpp"
#include "faultline/harness/sweep/sweep.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/metrics.hpp"
#include "faultline/reports/report_sink.hpp"

namespace faultline::harness::sweep {

namespace {

using nlohmann::json;

bool handled(const std::string& verdict) {
  return verdict == "detected" || verdict == "masked" || verdict == "pass";
}

bool allowed(const std::string& verdict, const json& section) {
  const json allow = section.value("allow", json::array());
  return std::find(allow.begin(), allow.end(), verdict) != allow.end();
}

std::string result_of(const std::string& verdict, const json& section) {
  if (verdict == "not-run" || verdict == "not-reached") return "skip";
  if (verdict == "error") return "error";
  if (handled(verdict)) return "pass";
  return allowed(verdict, section) ? "xfail" : "fail";
}

// A point that fails the sweep: neither detected, masked, skipped nor allowed.
bool fails(const std::string& verdict, const json& section) {
  const std::string result = result_of(verdict, section);
  return result == "fail" || result == "error";
}

}  // namespace

json point_scenario(const json& point, const json& section, size_t run_id) {
  const std::string verdict = text_at(point, "verdict");
  const std::string result = result_of(verdict, section);
  std::string evidence = text_at(point, "evidence");
  if (const std::string stacks = text_at(point, "hung_stacks"); !stacks.empty())
    evidence += "\nhung stacks (folded):\n" + stacks;
  json scenario = {
      {"id", text_at(point, "name")},
      {"tags", {"sweep", text_at(point, "family")}},
      {"source", text_at(point, "id")},
      {"sha256", ""},
      {"seed", 0},
      {"run_id", run_id},
      {"agents", {{"initiator", "program"}, {"responder", "program"}, {"ranks", json::array()}}},
      {"verdict", result},
      {"expected", "the program detects the fault, or masks it (a checker saw right output)"},
      {"observed",
       verdict == "not-run" ? "not run: " + text_at(point, "evidence") : "the program: " + verdict},
      {"evidence", evidence},
      {"hint", verdict == "not-reached" ? "the site was not reached this time: a program "
                                          "whose posts differ from run to run"
               : result == "xfail"
                   ? "allowed: the sweep was told " + verdict + " is known here (--allow)"
                   : ""},
      {"duration_ms", std::max(0.0, point.value("seconds", 0.0)) * 1000},
      {"sides", json::object()}};
  if (verdict != "not-run") {
    json role = {{"verdict", verdict},
                 {"exit_code", nullptr},
                 {"signal", nullptr},
                 {"seconds", std::max(0.0, point.value("seconds", 0.0))},
                 {"faults_applied", 0},
                 {"first_error_line", text_at(point, "first_error_line")},
                 {"fault_to_error_ms", point.value("fault_to_error_ms", json(nullptr))},
                 {"evidence", text_at(point, "evidence")},
                 {"hint", ""},
                 {"instrumented", 0},
                 {"bypass", json::array()},
                 {"log", text_at(point, "log")}};
    scenario["sut"] = {{"expect", "detected"},
                       {"verdict", verdict},
                       {"judged", "program"},
                       {"roles", {{"program", role}}}};
  }
  return scenario;
}

json sweep_outcome(const json& section) {
  // The worst verdict first: data gone wrong unseen, then a stop, then a wait.
  static const std::vector<std::string> worst_first = {
      "silent-corruption", "undetected", "crashed", "hang", "fail", "error"};
  std::string worst;
  std::string failed;
  size_t ran = 0;
  for (const auto& point : section.value("points", json::array())) {
    const std::string verdict = text_at(point, "verdict");
    ran += verdict != "not-run";
    if (!fails(verdict, section)) continue;
    failed += (failed.empty() ? "; not detected or masked: " : ", ") + text_at(point, "name") +
              " (" + verdict + ")";
    const auto rank = std::find(worst_first.begin(), worst_first.end(), verdict);
    if (worst.empty() || rank < std::find(worst_first.begin(), worst_first.end(), worst))
      worst = verdict;
  }
  const int code = sweep_exit_code(section);
  // Points left unrun, and no --partial-ok: what was planned was not all checked.
  if (code == kExitIncomplete) worst = "not-reached";
  return {{"verdict", code == 0 ? "pass" : worst},
          {"exit_code", code},
          {"seconds", std::max(0.0, section.value("seconds", 0.0))},
          {"faults_applied", ran},
          {"evidence", text_at(section, "score_line") + failed},
          {"hint", code == 0 ? ""
                   : code == kExitIncomplete
                       ? "the budget left points unrun (" + text_at(section, "stopped") +
                             "): a larger budget, --shard, or partial_ok when a partial sweep "
                             "is what you want"
                       : "each point's files are in points/NUMBER/; one runs again alone "
                         "with faultline sut exec --point ID"}};
}

std::string coverage_of(const json& section) {
  size_t planned = 0;
  size_t judged = 0;
  for (const auto& point : section.value("points", json::array())) {
    ++planned;
    judged += text_at(point, "verdict") != "not-run";
  }
  if (judged == planned) return "";
  return std::to_string(judged) + " of " + std::to_string(planned) + " points judged";
}

int sweep_exit_code(const json& section) {
  for (const auto& point : section.value("points", json::array()))
    if (fails(text_at(point, "verdict"), section)) return kExitConformanceFailure;
  const bool partial_ok = section.value("partial_ok", false);
  return coverage_of(section).empty() || partial_ok ? kExitPass : kExitIncomplete;
}

struct SweepReport::Impl {
  std::unique_ptr<ReportDocument> document;
  std::vector<std::unique_ptr<reports::ReportSink>> files;   // report.json, junit.xml, summary.md
  std::vector<std::unique_ptr<reports::ReportSink>> others;  // the metrics
  bool files_at_finish = false;
  reports::Metrics* metrics = nullptr;
  std::string report_dir;
  std::set<std::string> added;  // the ids of the points added as scenarios

  // Each sink that takes events now: the files only when they are written as the run goes.
  template <typename Call>
  Status each_sink(Call call) {
    for (auto* group : {&others, &files}) {
      if (group == &files && files_at_finish) continue;
      for (auto& sink : *group) FAULTLINE_RETURN_IF_ERROR(call(*sink));
    }
    return Status{};
  }
};

SweepReport::SweepReport(std::string report_dir, reports::Metrics* metrics)
    : impl_(std::make_unique<Impl>()) {
  impl_->report_dir = std::move(report_dir);
  impl_->metrics = metrics;
}

SweepReport::~SweepReport() = default;

Status SweepReport::start(const json& section, bool write) {
  const transports::Target target{"sut", "", ""};
  const size_t total = section.value("points", json::array()).size();
  impl_->document = std::make_unique<ReportDocument>(this_machine_as_agent(target),
                                                     RunMetadata{"sweep", target, 0, false}, total);
  impl_->document->set_section("sweep", section);
  impl_->files = reports::report_directory_sinks(impl_->report_dir);
  impl_->files_at_finish = !write;
  if (impl_->metrics != nullptr) {
    reports::MetricsPlan plan;
    plan.suite = "sweep";
    plan.sweep = true;
    impl_->others.push_back(std::make_unique<reports::MetricsSink>(*impl_->metrics, plan));
  }
  return impl_->each_sink(
      [&](reports::ReportSink& sink) { return sink.on_run_started(impl_->document->json()); });
}

Status SweepReport::add_point(const json& section, const json& point) {
  impl_->document->set_section("sweep", section);
  return add_scenario(section, point);
}

Status SweepReport::add_points(const json& section, const json& points) {
  impl_->document->set_section("sweep", section);
  for (const json& point : points) FAULTLINE_RETURN_IF_ERROR(add_scenario(section, point));
  return Status{};
}

Status SweepReport::add_scenario(const json& section, const json& point) {
  impl_->added.insert(text_at(point, "id"));
  const size_t run_id = impl_->document->json().at("scenarios").size();
  const json& added = impl_->document->add(point_scenario(point, section, run_id));
  return impl_->each_sink([&](reports::ReportSink& sink) {
    return sink.on_scenario_finished(added, impl_->document->json());
  });
}

Status SweepReport::finish(const json& section) {
  impl_->document->set_section("sweep", section);
  // The points that never ran (the budget, a stop) are testcases too, skipped with the reason:
  // the run is then complete, and junit.xml shows each as not run.
  for (const json& point : section.value("points", json::array()))
    if (impl_->added.count(text_at(point, "id")) == 0)
      FAULTLINE_RETURN_IF_ERROR(add_scenario(section, point));
  impl_->files_at_finish = false;
  FAULTLINE_RETURN_IF_ERROR(impl_->each_sink(
      [&](reports::ReportSink& sink) { return sink.on_run_finished(impl_->document->json()); }));
  return reports::write_file_atomically(impl_->report_dir + "/sut.json",
                                        sweep_outcome(section).dump(2));
}

}  // namespace faultline::harness::sweep
