#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::harness {

/// What a peer sends goes into the report only as the report's schema allows it: these say
/// what is wrong with a side's result, or with an agent's record (its hello, with the id and
/// remote address the coordinator gave it), as "pointer: expected ..." lines; empty when fine.
std::vector<std::string> side_result_problems(const nlohmann::json& side);

/// A scenario_result message (validated as a message) as the report's side of its agent: the
/// envelope (type, seq, session) dropped; an error with the first problem when the report's
/// schema would not hold it.
Result<nlohmann::json> side_from_result(const nlohmann::json& message);

/// An agent as the report holds it: its hello's host, pid, target and devices (empty where the
/// hello has none), with the id and the remote address the coordinator knows it by.
nlohmann::json agent_record_of(const nlohmann::json& hello, const std::string& id,
                               const std::string& remote);
std::vector<std::string> agent_record_problems(const nlohmann::json& agent);

}  // namespace faultline::harness
