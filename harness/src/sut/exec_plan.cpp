// The plan of `sut exec`: its --plan files and --fault options, read by the fault language.
#include "faultline/harness/sut/exec_plan.hpp"

#include <fstream>
#include <sstream>

#include "faultline/transports/fault/fault_spec.hpp"

namespace faultline::harness::sut {

using nlohmann::json;

Result<json> parse_fault_spec(const std::string& spec) {
  json fault = json::object();
  std::istringstream pairs(spec);
  for (std::string pair; std::getline(pairs, pair, ',');) {
    const size_t equals = pair.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == pair.size()) {
      return Error{ErrorCode::kInvalidArgument,
                   "--fault " + spec + ": expected key=value pairs separated by commas, got \"" +
                       pair + "\""};
    }
    const std::string key = pair.substr(0, equals);
    const std::string value = pair.substr(equals + 1);
    // Numbers (nth=5, probability=0.5) and true/false (qp_error=true) are JSON's; the rest
    // (status=REM_ACCESS_ERR) a string.
    const json parsed = json::parse(value, nullptr, false);
    fault[key] = parsed.is_number() || parsed.is_boolean() ? parsed : json(value);
  }
  return fault;
}

Result<json> plan_from_options(const std::vector<std::string>& plan_files,
                               const std::vector<std::string>& faults_given) {
  using namespace transports::fault;
  json faults = json::array();
  for (const auto& path : plan_files) {
    std::ifstream file(path);
    if (!file) return Error{ErrorCode::kInvalidArgument, "--plan " + path + ": cannot be read"};
    const json plan = json::parse(file, nullptr, false);
    if (plan.is_discarded())
      return Error{ErrorCode::kInvalidArgument, "--plan " + path + ": not JSON"};
    if (auto parsed = parse_fault_set(plan, kInterposer, "--plan " + path); !parsed.ok())
      return std::move(parsed).take_error();
    for (const auto& fault : plan.at("faults")) faults.push_back(fault);
  }
  for (const auto& spec : faults_given) {
    auto fault = parse_fault_spec(spec);
    if (!fault.ok()) return std::move(fault).take_error();
    if (auto parsed = parse_fault(*fault, kInterposer, "--fault " + spec); !parsed.ok())
      return std::move(parsed).take_error();
    faults.push_back(std::move(fault).value());
  }
  return json{{"faults", faults}};
}

}  // namespace faultline::harness::sut
