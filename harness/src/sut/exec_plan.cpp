// The plan of `sut exec`: its --plan files and --fault options, read by the fault language.
#include "faultline/harness/sut/exec_plan.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "faultline/core/json_depth.hpp"
#include "faultline/core/printable_text.hpp"
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
    // The user's text: bytes that are not UTF-8 replaced, so the plan can be written as JSON.
    const std::string key = valid_utf8(pair.substr(0, equals));
    const std::string value = valid_utf8(pair.substr(equals + 1));
    // Numbers (nth=5, probability=0.5) and true/false (qp_error=true) are JSON's; the rest
    // (status=REM_ACCESS_ERR) a string.
    const json parsed = json::parse(value, nullptr, false);
    fault[key] = parsed.is_number() || parsed.is_boolean() ? parsed : json(value);
  }
  return fault;
}

Result<json> plan_from_text(std::string_view text, const std::string& where) {
  auto plan = parse_json_text(where, text);
  if (!plan.ok()) return plan;
  if (auto parsed =
          transports::fault::parse_fault_set(*plan, transports::fault::kInterposer, where);
      !parsed.ok())
    return std::move(parsed).take_error();
  return plan;
}

namespace {

constexpr uintmax_t kLargestPlan = 16 << 20;

// A --plan file: a regular file of at most kLargestPlan bytes, read by plan_from_text.
Result<json> read_plan_file(const std::string& path) {
  auto text = read_input_file(path, kLargestPlan);
  if (!text.ok()) return Error{ErrorCode::kInvalidArgument, "--plan " + text.error().message};
  return plan_from_text(text.value(), "--plan " + path);
}

}  // namespace

Result<json> plan_from_options(const std::vector<std::string>& plan_files,
                               const std::vector<std::string>& faults_given,
                               const std::vector<std::string>& standing_given) {
  using namespace transports::fault;
  json merged = {{"faults", json::array()}, {"standing", json::array()}};
  for (const auto& path : plan_files) {
    auto plan = read_plan_file(path);
    if (!plan.ok()) return plan;
    for (const char* list : {"faults", "standing"})
      for (const auto& fault : plan->value(list, json::array())) merged[list].push_back(fault);
    // Its seed goes with it; two plans with two seeds cannot both hold.
    if (plan->contains("seed")) {
      if (merged.contains("seed") && merged["seed"] != plan->at("seed"))
        return Error{ErrorCode::kInvalidArgument, "--plan " + path +
                                                      ": /seed: differs from the "
                                                      "seed of an earlier --plan"};
      merged["seed"] = plan->at("seed");
    }
  }
  for (const auto& [given, option, list] : {std::tuple{&faults_given, "--fault ", "faults"},
                                            std::tuple{&standing_given, "--with ", "standing"}}) {
    for (const auto& spec : *given) {
      auto fault = parse_fault_spec(spec);
      if (!fault.ok()) return std::move(fault).take_error();
      if (auto parsed = parse_fault(*fault, kInterposer, option + spec); !parsed.ok())
        return std::move(parsed).take_error();
      merged[list].push_back(std::move(fault).value());
    }
  }
  return merged;
}

}  // namespace faultline::harness::sut
