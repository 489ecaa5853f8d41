#include "faultline/harness/control/agent_faults.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "faultline/core/json_depth.hpp"
#include "faultline/harness/base/strict_json.hpp"
#include "faultline/transports/fault/fault_spec.hpp"

namespace faultline::harness {

Result<nlohmann::json> read_agent_faults(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return nlohmann::json::array();
  auto text = read_input_file(path);
  if (!text.ok())
    return Error{ErrorCode::kInvalidArgument, "the fault file " + text.error().message};
  const auto invalid = [&path](const std::string& where, const std::string& what) {
    return Error{ErrorCode::kInvalidArgument,
                 "the fault file " + path + ": " + where + (where.empty() ? "" : ": ") + what}
        .with_hint(
            "each entry is a fault as a scenario's \"faults\" has it, without \"role\" "
            "(docs/scenarios.md)");
  };
  JsonTextProblem problem;
  const auto parsed = parse_json_strictly(text.value(), problem);
  if (!parsed) return invalid(problem.pointer, problem.expected);
  const nlohmann::json& faults = *parsed;
  if (!faults.is_array()) return invalid("", "expected an array of faults");
  // Checked by the fault language as a scenario file's faults are (the decorator's and the kv
  // protocol's kinds); the scenario child checks the whole document against the schema again.
  for (size_t i = 0; i < faults.size(); ++i) {
    const nlohmann::json& fault = faults[i];
    if (fault.is_object() && fault.contains("role"))
      return invalid("/" + std::to_string(i), "an entry names a role: leave it out");
    using namespace transports::fault;
    auto spec = parse_fault(fault, kDecorator | kProtocolHook, "/" + std::to_string(i));
    if (!spec.ok()) return invalid("", spec.error().message);
  }
  return faults;
}

}  // namespace faultline::harness
