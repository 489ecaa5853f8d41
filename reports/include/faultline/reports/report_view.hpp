#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace faultline::reports {

/// "rack1-a <-> rack2-b" for a pair, "ring of 4 (rack1-a..rack2-b)" for a ring, by the agents'
/// `labels` (agent_labels: their names, stable from run to run where join-order ids are not);
/// the programs' roles ("server, client") for a SUT scenario.
std::string agents_label(const nlohmann::json& scenario,
                         const std::map<std::string, std::string>& labels);
/// The verdict, with the judged program's for a SUT scenario: "pass (detected)".
std::string verdict_label(const nlohmann::json& scenario);
/// How each program of a SUT scenario ended, as (label, text) lines for people:
/// ("client", "detected: exit 1 after 0.42 s, 1 fault applied, error 3.1 ms after it: <line>").
/// Empty for other scenarios.
std::vector<std::pair<std::string, std::string>> program_lines(const nlohmann::json& scenario);
/// The run's suite, or "selection" when scenarios were named one by one.
std::string suite_name(const nlohmann::json& report);
/// How many scenario runs ended with each verdict.
std::map<std::string, int> verdict_counts(const nlohmann::json& report);
/// "ofi/tcp on lo" from the run's target.
std::string target_label(const nlohmann::json& report);
/// Seconds, two decimals.
std::string seconds(const nlohmann::json& scenario);
/// What the sides' devices said, as (label, text) lines for people, each side by its `labels`
/// (agent_labels): completions that did not succeed ("completion errors (agent-2)", "REM_ACCESS_ERR
/// 1, WR_FLUSH_ERR 3") and port counters that grew ("port counters (agent-1: rxe0 port 1)",
/// "hw_counters/rcvd_rnr_err +2").
std::vector<std::pair<std::string, std::string>> device_evidence(
    const nlohmann::json& scenario, const std::map<std::string, std::string>& labels);

/// How people read an agent's id: its name, with its host where that differs from the name and
/// from the run's own host ("rail0-a (node7)"); the id itself for reports without names.
std::map<std::string, std::string> agent_labels(const nlohmann::json& report);
/// Each agent's name alone (unique among a run's agents), for what must read the same from run
/// to run wherever the agents ran: junit testcase names, which CI test history follows.
std::map<std::string, std::string> agent_names(const nlohmann::json& report);
/// `id`'s label from `agent_labels`, or the id itself where the report has none.
std::string agent_label(const std::map<std::string, std::string>& labels, const std::string& id);

/// One cell of the pair matrix: the runs of one pair of agents.
struct PairCell {
  int runs = 0;
  std::map<std::string, int> verdicts;  ///< how many ended with each verdict
  std::string worst;                    ///< the most severe of them ("fail" over "pass")
};
/// The pair scans of a report as a matrix: the agents (by `agent_labels`, sorted) and, for each
/// two of them (both orders), their cell. Empty below 3 agents, where there is nothing to see.
struct PairMatrix {
  std::vector<std::string> agents;
  std::map<std::pair<std::string, std::string>, PairCell> cells;
};
PairMatrix pair_matrix(const nlohmann::json& report);

/// A monitor round (the report's `monitor` section) for people: what it says in one line
/// ("round 12 at 2026-11-25T03:10:00Z: 6 agents, 15 pairs (14 ok, 1 failed); median round
/// trip 41.2 us"), its suspects (kind, name, reason, evidence) and its agents (name, rail,
/// pairs ok/slow/failed, round-trip p50 and p99). Empty `summary` for other reports.
struct MonitorView {
  std::string summary;
  std::vector<std::vector<std::string>> suspects;
  std::vector<std::vector<std::string>> agents;
};
MonitorView monitor_view(const nlohmann::json& report);
/// "41.2 us", "5.20 ms", "1.30 s".
std::string duration_words(double seconds);

/// Where a verdict goes in a list for people: failures (fail, crashed, timeout) first, then
/// errors, then skip and xfail, then pass.
int reading_order(const std::string& verdict);

}  // namespace faultline::reports
