#include "faultline/harness/control/agent_faults.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "faultline/core/json_depth.hpp"
#include "faultline/harness/scenario/scenario_loader.hpp"
#include "faultline/harness/strict_json.hpp"

namespace faultline::harness {

Result<nlohmann::json> read_agent_faults(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return nlohmann::json::array();
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  if (!file) {
    return errno_error("read", errno, "the fault file " + path);
  }
  const auto invalid = [&path](const std::string& where, const std::string& what) {
    return Error{ErrorCode::kInvalidArgument,
                 "the fault file " + path + ": " + where + (where.empty() ? "" : ": ") + what}
        .with_hint(
            "each entry is a fault as a scenario's \"faults\" has it, without \"role\" "
            "(docs/scenarios.md)");
  };
  if (json_nesting_depth(text.str()) > kMaxJsonDepth)
    return invalid("", "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  JsonTextProblem problem;
  const auto parsed = parse_json_strictly(text.str(), problem);
  if (!parsed) return invalid(problem.pointer, problem.expected);
  const nlohmann::json& faults = *parsed;
  if (!faults.is_array()) return invalid("", "expected an array of faults");
  // Checked as the faults of a scenario whose one role is this side.
  nlohmann::json document = {{"id", "agent-faults"},
                             {"title", "the agent's fault file"},
                             {"tags", nlohmann::json::array()},
                             {"roles", {{"side", nlohmann::json::object()}}},
                             {"steps", {{{"op", "create_endpoint"}}}},
                             {"faults", nlohmann::json::array()}};
  for (const auto& fault : faults) {
    nlohmann::json entry = fault;
    if (entry.is_object()) {
      if (entry.contains("role")) return invalid("", "an entry names a role: leave it out");
      entry["role"] = "side";
    }
    document["faults"].push_back(std::move(entry));
  }
  const auto problems = scenario_schema_problems(document);
  if (!problems.empty()) {
    std::string first = problems.front();
    if (first.rfind("/faults", 0) == 0) first = first.substr(std::string("/faults").size());
    return invalid("", first);
  }
  return faults;
}

}  // namespace faultline::harness
