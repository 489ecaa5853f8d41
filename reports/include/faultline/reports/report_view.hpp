#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace faultline::reports {

/// "agent-1 <-> agent-2" for a pair, "ring of 4 (agent-1..agent-4)" for a ring, the programs'
/// roles ("server, client") for a SUT scenario.
std::string agents_label(const nlohmann::json& scenario);
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
/// What the sides' devices said, as (label, text) lines for people: completions that did not
/// succeed ("completion errors (agent-2)", "REM_ACCESS_ERR 1, WR_FLUSH_ERR 3") and port
/// counters that grew ("port counters (agent-1: rxe0 port 1)", "hw_counters/rcvd_rnr_err +2").
std::vector<std::pair<std::string, std::string>> device_evidence(const nlohmann::json& scenario);

}  // namespace faultline::reports
