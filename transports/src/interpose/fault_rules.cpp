#include "faultline/transports/interpose/fault_rules.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace faultline::transports::interpose {

namespace {

using nlohmann::json;

Error bad_field(size_t index, const std::string& field, const std::string& expected) {
  return Error{ErrorCode::kInvalidArgument, "FAULTLINE_FAULTS: /faults/" + std::to_string(index) +
                                                "/" + field + ": expected " + expected};
}

Result<FaultRule> parse_rule(const json& fault, size_t index) {
  if (!fault.is_object()) return bad_field(index, "", "an object");
  FaultRule rule;
  rule.kind = fault.value("kind", std::string("rewrite_status"));
  if (rule.kind != "rewrite_status") return bad_field(index, "kind", "\"rewrite_status\"");
  if (!fault.contains("status") || !fault.at("status").is_string())
    return bad_field(index, "status", "a completion status name (REM_ACCESS_ERR, ...)");
  auto status = transports::completion_status_from_string(fault.at("status").get<std::string>());
  if (!status || *status == transports::CompletionStatus::kSuccess)
    return bad_field(index, "status", "an error status name (REM_ACCESS_ERR, ...)");
  rule.status = *status;
  auto unsigned_field = [&](const char* name) -> std::optional<uint64_t> {
    if (!fault.contains(name)) return uint64_t{0};
    if (!fault.at(name).is_number_unsigned()) return std::nullopt;
    return fault.at(name).get<uint64_t>();
  };
  for (auto [name, target] : {std::pair{"nth", &rule.nth}, std::pair{"every", &rule.every}}) {
    auto value = unsigned_field(name);
    if (!value) return bad_field(index, name, "a positive integer");
    *target = *value;
  }
  if ((rule.nth == 0) == (rule.every == 0))
    return bad_field(index, "nth", "nth or every, not both");
  auto vendor_err = unsigned_field("vendor_err");
  if (!vendor_err || *vendor_err > UINT32_MAX) return bad_field(index, "vendor_err", "a uint32");
  rule.vendor_err = static_cast<uint32_t>(*vendor_err);
  const std::string side = fault.value("side", std::string("any"));
  if (side != "any" && side != "send" && side != "recv")
    return bad_field(index, "side", "\"send\", \"recv\" or \"any\"");
  rule.side = side == "send" ? Side::kSend : side == "recv" ? Side::kRecv : Side::kAny;
  if (fault.contains("layer") && !fault.at("layer").is_string())
    return bad_field(index, "layer", "a provider name (\"ofi_rxm\", \"tcp\")");
  rule.layer = fault.value("layer", std::string());
  if (fault.contains("rank")) {
    if (!fault.at("rank").is_number_unsigned())
      return bad_field(index, "rank", "a rank (0, 1, ...)");
    rule.rank = fault.at("rank").get<int>();
  }
  return rule;
}

}  // namespace

bool FaultRule::fires() {
  ++matched;
  return nth != 0 ? matched == nth : matched % every == 0;
}

Result<std::vector<FaultRule>> parse_fault_rules(const json& plan) {
  if (!plan.is_object() || !plan.contains("faults") || !plan.at("faults").is_array()) {
    return Error{ErrorCode::kInvalidArgument,
                 "FAULTLINE_FAULTS: expected {\"faults\": [...]} at the top"};
  }
  std::vector<FaultRule> rules;
  const json& faults = plan.at("faults");
  for (size_t i = 0; i < faults.size(); ++i) {
    auto rule = parse_rule(faults[i], i);
    if (!rule.ok()) return std::move(rule).take_error();
    rules.push_back(std::move(rule).value());
  }
  return rules;
}

Result<std::vector<FaultRule>> fault_rules_from_environment() {
  const char* value = std::getenv("FAULTLINE_FAULTS");
  if (value == nullptr || *value == '\0') return std::vector<FaultRule>{};
  std::string text = value;
  if (text.front() == '@') {
    std::ifstream file(text.substr(1));
    if (!file) return Error{ErrorCode::kIoError, "FAULTLINE_FAULTS: cannot read " + text.substr(1)};
    std::stringstream content;
    content << file.rdbuf();
    text = content.str();
  }
  const json plan = json::parse(text, nullptr, false);
  if (plan.is_discarded()) return Error{ErrorCode::kInvalidArgument, "FAULTLINE_FAULTS: not JSON"};
  return parse_fault_rules(plan);
}

std::optional<int> launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0')
      return std::atoi(value);
  }
  return std::nullopt;
}

}  // namespace faultline::transports::interpose
