// The plan of `sut exec`: its --plan files and --fault options, read by the fault language.
#include "faultline/harness/sut/exec_plan.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "faultline/core/json_depth.hpp"
#include "faultline/harness/base/strict_json.hpp"
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

namespace {

constexpr std::streamsize kLargestPlan = 16 << 20;

// A --plan file as JSON: a regular file of at most kLargestPlan bytes, nested no deeper than
// kMaxJsonDepth, each key once (parse_json_strictly); errors name the file and the place.
Result<json> read_plan_file(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    return Error{ErrorCode::kInvalidArgument, "--plan " + path + ": not a file"};
  std::ifstream file(path, std::ios::binary);
  std::string text(static_cast<size_t>(kLargestPlan) + 1, '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (file.bad()) return Error{ErrorCode::kInvalidArgument, "--plan " + path + ": cannot be read"};
  text.resize(static_cast<size_t>(file.gcount()));
  if (text.size() > static_cast<size_t>(kLargestPlan)) {
    return Error{ErrorCode::kInvalidArgument,
                 "--plan " + path + ": larger than " + std::to_string(kLargestPlan >> 20) + " MiB"};
  }
  if (json_nesting_depth(text) > kMaxJsonDepth) {
    return Error{ErrorCode::kInvalidArgument, "--plan " + path + ": nested deeper than " +
                                                  std::to_string(kMaxJsonDepth) + " levels"};
  }
  JsonTextProblem problem;
  auto plan = parse_json_strictly(text, problem);
  if (!plan) {
    return Error{ErrorCode::kInvalidArgument,
                 "--plan " + path + ": " + problem.pointer + ": expected " + problem.expected};
  }
  return std::move(*plan);
}

}  // namespace

Result<json> plan_from_options(const std::vector<std::string>& plan_files,
                               const std::vector<std::string>& faults_given) {
  using namespace transports::fault;
  json merged = {{"faults", json::array()}};
  for (const auto& path : plan_files) {
    auto plan = read_plan_file(path);
    if (!plan.ok()) return plan;
    if (auto parsed = parse_fault_set(*plan, kInterposer, "--plan " + path); !parsed.ok())
      return std::move(parsed).take_error();
    for (const auto& fault : plan->at("faults")) merged["faults"].push_back(fault);
    // Its seed goes with it; two plans with two seeds cannot both hold.
    if (plan->contains("seed")) {
      if (merged.contains("seed") && merged["seed"] != plan->at("seed"))
        return Error{ErrorCode::kInvalidArgument, "--plan " + path +
                                                      ": /seed: differs from the "
                                                      "seed of an earlier --plan"};
      merged["seed"] = plan->at("seed");
    }
  }
  for (const auto& spec : faults_given) {
    auto fault = parse_fault_spec(spec);
    if (!fault.ok()) return std::move(fault).take_error();
    if (auto parsed = parse_fault(*fault, kInterposer, "--fault " + spec); !parsed.ok())
      return std::move(parsed).take_error();
    merged["faults"].push_back(std::move(fault).value());
  }
  return merged;
}

}  // namespace faultline::harness::sut
