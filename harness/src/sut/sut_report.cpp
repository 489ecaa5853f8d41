// A SUT scenario's outcome in report.json's form: the harness verdict (pass when the judged
// program reached the expected verdict), and under `sut` how every program ended.
#include <algorithm>
#include <string_view>

#include "faultline/core/printable_text.hpp"
#include "faultline/harness/base/strict_json.hpp"
#include "faultline/harness/sut/sut_run.hpp"

namespace faultline::harness::sut {

namespace {

using nlohmann::json;

}  // namespace

const std::vector<std::string>& role_verdict_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const SutVerdict verdict : kAllSutVerdicts) all.emplace_back(to_string(verdict));
    all.emplace_back("error");
    return all;
  }();
  return names;
}

namespace {

// Only values of the schema's types reach the report, whatever the file held.
json integer_or_null(const json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_number_integer() ? *found : json(nullptr);
}

double non_negative(const json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_number() ? std::max(0.0, found->get<double>()) : 0.0;
}

json non_negative_or_null(const json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_number() ? json(non_negative(object, key))
                                                     : json(nullptr);
}

}  // namespace

json role_summary(const json& sut_json, const std::string& directory) {
  if (!sut_json.is_object()) {
    return {{"verdict", "error"},
            {"seconds", 0},
            {"faults_applied", 0},
            {"evidence", "it left no sut.json: see " + directory + "/sut-exec.log"},
            {"log", directory}};
  }
  std::string verdict = text_at(sut_json, "verdict");
  if (std::find(role_verdict_names().begin(), role_verdict_names().end(), verdict) ==
      role_verdict_names().end())
    verdict = "error";
  // Coverage from the interposers' events, or (a summary an agent sent) as summarized there.
  int instrumented = 0;
  json bypass = json::array();
  const json events = sut_json.value("events", json());
  if (events.is_array()) {
    for (const auto& event : events) {
      if (!event.is_object()) continue;
      const std::string kind = text_at(event, "event");
      instrumented += kind == "instrumented";
      if (kind == "bypass") bypass.push_back(text_at(event, "call"));
    }
  } else {
    auto count = sut_json.find("instrumented");
    if (count != sut_json.end() && count->is_number_unsigned() && *count < 1000000)
      instrumented = count->get<int>();
    for (const auto& call : sut_json.value("bypass", json::array()))
      if (call.is_string()) bypass.push_back(call);
  }
  const auto count_of = [&sut_json](const char* key) {
    auto found = sut_json.find(key);
    return found != sut_json.end() && found->is_number_unsigned() ? *found : json(0);
  };
  json summary = {{"verdict", verdict},
                  {"exit_code", integer_or_null(sut_json, "exit_code")},
                  {"signal", integer_or_null(sut_json, "signal")},
                  {"seconds", non_negative(sut_json, "seconds")},
                  {"faults_applied", count_of("faults_applied")},
                  {"limits_lowered", count_of("limits_lowered")},
                  // A peer's or a program's words: shown, never obeyed, by a terminal.
                  {"first_error_line", printable(text_at(sut_json, "first_error_line"))},
                  {"fault_to_error_ms", non_negative_or_null(sut_json, "fault_to_error_ms")},
                  {"longest_quiet_ms", non_negative_or_null(sut_json, "longest_quiet_ms")},
                  {"evidence", printable(text_at(sut_json, "evidence"))},
                  {"hint", printable(text_at(sut_json, "hint"))},
                  {"instrumented", instrumented},
                  {"bypass", bypass},
                  {"log", printable(directory)}};
  if (const std::string stacks = text_at(sut_json, "stacks"); !stacks.empty())
    summary["stacks"] = printable(stacks);
  return summary;
}

ScenarioOutcome ScenarioOutcome::of(const SutScenario& scenario) {
  ScenarioOutcome outcome{scenario.name, scenario.file, scenario.sha256, scenario.expect,
                          scenario.judged};
  for (const auto& role : scenario.roles) outcome.role_names.push_back(role.name);
  return outcome;
}

namespace {

size_t faults_applied(const json& summary) {
  const json applied = summary.value("faults_applied", json(0));
  return applied.is_number_unsigned() ? applied.get<size_t>() : 0;
}

}  // namespace

void ScenarioOutcome::judge() {
  if (!roles.contains(judged) || !roles.at(judged).is_object()) roles[judged] = json::object();
  json& judged_summary = roles.at(judged);
  verdict = judged_summary.value("verdict", std::string("error"));
  reason.clear();
  if (verdict == "error") {
    result = "error";
    reason = judged_summary.value("evidence", std::string("no result from " + judged));
    return;
  }
  // The judged role stopped on its own error, none of its own faults having fired, after a
  // fault fired in a peer (StepMesh's server checking a rendezvous the worker's fault changed):
  // it detected the peer's fault.
  const std::string error_line = judged_summary.value("first_error_line", std::string());
  if (verdict == "fail" && faults_applied(judged_summary) == 0 && !error_line.empty()) {
    for (const auto& role : role_names) {
      if (role == judged || faults_applied(roles.value(role, json::object())) == 0) continue;
      verdict = "detected";
      judged_summary["verdict"] = verdict;
      judged_summary["evidence"] = "stopped on its own check after " +
                                   std::to_string(faults_applied(roles.at(role))) +
                                   " fault(s) fired in " + role + ": " + error_line;
      judged_summary["hint"] = "";
      break;
    }
  }
  result = verdict == expect ? "pass" : "fail";
  if (result == "fail") {
    reason = "expected " + expect + ", got " + verdict + ": " +
             judged_summary.value("evidence", std::string());
  }
}

json ScenarioOutcome::to_report_scenario(size_t run_id) const {
  std::string evidence = first_attempt.empty() ? "" : "first attempt: " + first_attempt;
  for (const auto& role : role_names) {
    if (!roles.contains(role)) continue;
    const json& summary = roles.at(role);
    if (!evidence.empty()) evidence += "\n";
    evidence += role + ": " + summary.value("verdict", std::string("error"));
    if (const std::string text = summary.value("evidence", std::string()); !text.empty())
      evidence += " (" + text + ")";
  }
  const json judged_summary = roles.value(judged, json::object());
  json scenario = {{"id", name},
                   {"tags", {"sut"}},
                   {"source", file},
                   {"sha256", sha256},
                   {"seed", 0},
                   {"run_id", run_id},
                   {"agents",
                    {{"initiator", role_names.empty() ? judged : role_names.front()},
                     {"responder", judged},
                     {"ranks", role_names}}},
                   {"verdict", result},
                   {"expected", result == "skip" ? "" : judged + " reaches the verdict " + expect},
                   {"observed", result == "skip" ? reason : judged + ": " + verdict},
                   {"evidence", evidence},
                   {"hint", judged_summary.value("hint", std::string())},
                   {"duration_ms", seconds * 1000},
                   {"sides", json::object()}};
  if (result != "skip") {
    scenario["sut"] = {
        {"expect", expect}, {"verdict", verdict}, {"judged", judged}, {"roles", roles}};
  }
  return scenario;
}

}  // namespace faultline::harness::sut
