#include "faultline/transports/interpose/fault_rules.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace faultline::transports::interpose {

namespace {

using nlohmann::json;

struct KindName {
  FaultKind kind;
  const char* name;
};

constexpr std::array kKindNames{
    KindName{FaultKind::kRewriteStatus, "rewrite_status"},
    KindName{FaultKind::kCorruptData, "corrupt_data"},
    KindName{FaultKind::kDropCompletion, "drop_completion"},
    KindName{FaultKind::kDuplicateCompletion, "duplicate_completion"},
    KindName{FaultKind::kFailPost, "fail_post"},
    KindName{FaultKind::kLimits, "limits"},
    KindName{FaultKind::kObserve, "observe"},
};

Error bad_field(size_t index, const std::string& field, const std::string& expected) {
  return Error{ErrorCode::kInvalidArgument, "FAULTLINE_FAULTS: /faults/" + std::to_string(index) +
                                                "/" + field + ": expected " + expected};
}

// A field that must be an unsigned integer no larger than `max`; nullopt when absent.
Result<std::optional<uint64_t>> unsigned_field(const json& fault, size_t index, const char* name,
                                               uint64_t max = UINT64_MAX) {
  if (!fault.contains(name)) return std::optional<uint64_t>{};
  const json& value = fault.at(name);
  // Parsed text holds a whole number as unsigned; one built in a program may be signed.
  const bool whole =
      value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0);
  if (!whole || value.get<uint64_t>() > max)
    return bad_field(index, name, "an integer from 0 to " + std::to_string(max));
  return std::optional<uint64_t>{value.get<uint64_t>()};
}

Status parse_firing(const json& fault, size_t index, FaultRule& rule) {
  for (auto [name, target] : {std::pair{"nth", &rule.nth}, std::pair{"every", &rule.every}}) {
    auto value = unsigned_field(fault, index, name);
    if (!value.ok()) return std::move(value).take_error();
    *target = value->value_or(0);
  }
  if (fault.contains("probability")) {
    const json& p = fault.at("probability");
    if (!p.is_number() || !(p.get<double>() > 0 && p.get<double>() <= 1))
      return bad_field(index, "probability", "a number above 0, at most 1");
    rule.probability = p.get<double>();
  }
  const int ways = (rule.nth != 0) + (rule.every != 0) + (rule.probability > 0);
  if (ways != 1) return bad_field(index, "nth", "exactly one of nth, every, probability (above 0)");
  return Status{};
}

Status parse_filters(const json& fault, size_t index, FaultRule& rule) {
  const std::string side_key = rule.kind == FaultKind::kFailPost ? "post" : "side";
  const std::string side = fault.value(side_key, std::string("any"));
  if (side != "any" && side != "send" && side != "recv")
    return bad_field(index, side_key, "\"send\", \"recv\" or \"any\"");
  rule.side = side == "send" ? Side::kSend : side == "recv" ? Side::kRecv : Side::kAny;
  if (fault.contains("layer") && !fault.at("layer").is_string())
    return bad_field(index, "layer", "a provider name (\"ofi_rxm\", \"tcp\")");
  rule.layer = fault.value("layer", std::string());
  auto rank = unsigned_field(fault, index, "rank", INT32_MAX);
  if (!rank.ok()) return std::move(rank).take_error();
  if (rank->has_value()) rule.rank = static_cast<int>(**rank);
  auto qp_num = unsigned_field(fault, index, "qp_num", UINT32_MAX);
  if (!qp_num.ok()) return std::move(qp_num).take_error();
  if (qp_num->has_value()) rule.qp_num = static_cast<uint32_t>(**qp_num);
  if (fault.contains("opcode")) {
    auto opcode = fault.at("opcode").is_string()
                      ? transports::opcode_from_string(fault.at("opcode").get<std::string>())
                      : std::nullopt;
    if (!opcode) return bad_field(index, "opcode", "SEND, RDMA_WRITE, RDMA_READ, RECV, ...");
    rule.opcode = opcode;
  }
  return Status{};
}

Status parse_data(const json& fault, size_t index, FaultRule& rule) {
  // The scenario files' `"scribble": true` is `"data": "scribble"`.
  if (fault.value("scribble", false) == true) rule.data = DataAction::kScribble;
  if (!fault.contains("data")) return Status{};
  const json& data = fault.at("data");
  if (data == "scribble") {
    rule.data = DataAction::kScribble;
  } else if (data == "suppress") {
    rule.data = DataAction::kSuppress;
  } else {
    return bad_field(index, "data", "\"scribble\" or \"suppress\"");
  }
  return Status{};
}

Status parse_status(const json& fault, size_t index, FaultRule& rule) {
  if (!fault.contains("status") || !fault.at("status").is_string())
    return bad_field(index, "status", "a completion status name (REM_ACCESS_ERR, ...)");
  auto status = transports::completion_status_from_string(fault.at("status").get<std::string>());
  if (!status || *status == transports::CompletionStatus::kSuccess)
    return bad_field(index, "status", "an error status name (REM_ACCESS_ERR, ...)");
  rule.status = *status;
  auto vendor_err = unsigned_field(fault, index, "vendor_err", UINT32_MAX);
  if (!vendor_err.ok()) return std::move(vendor_err).take_error();
  rule.vendor_err = static_cast<uint32_t>(vendor_err->value_or(0));
  if (fault.contains("qp_error") && !fault.at("qp_error").is_boolean())
    return bad_field(index, "qp_error", "true or false");
  rule.qp_error = fault.value("qp_error", false);
  return parse_data(fault, index, rule);
}

Status parse_limits(const json& fault, size_t index, FaultRule& rule) {
  LimitCaps& caps = rule.caps;
  const std::array<std::pair<const char*, std::optional<uint32_t>*>, 11> fields{{
      {"max_qp_wr", &caps.max_qp_wr},
      {"max_recv_wr", &caps.max_recv_wr},
      {"max_cqe", &caps.max_cqe},
      {"max_send_sge", &caps.max_send_sge},
      {"max_recv_sge", &caps.max_recv_sge},
      {"max_inline_data", &caps.max_inline_data},
      {"max_srq_wr", &caps.max_srq_wr},
      {"max_srq_sge", &caps.max_srq_sge},
      {"max_qp_rd_atom", &caps.max_qp_rd_atom},
      {"vendor_id", &caps.vendor_id},
      {"vendor_part_id", &caps.vendor_part_id},
  }};
  bool any = false;
  for (auto [name, target] : fields) {
    auto value = unsigned_field(fault, index, name, UINT32_MAX);
    if (!value.ok()) return std::move(value).take_error();
    if (value->has_value()) *target = static_cast<uint32_t>(**value);
    any = any || value->has_value();
  }
  auto mr_size = unsigned_field(fault, index, "max_mr_size");
  if (!mr_size.ok()) return std::move(mr_size).take_error();
  caps.max_mr_size = *mr_size;
  auto atomic_cap = unsigned_field(fault, index, "atomic_cap", 2);  // IBV_ATOMIC_GLOB
  if (!atomic_cap.ok()) return std::move(atomic_cap).take_error();
  if (atomic_cap->has_value()) caps.atomic_cap = static_cast<uint32_t>(**atomic_cap);
  any = any || caps.max_mr_size || caps.atomic_cap;
  if (!any)
    return bad_field(index, "max_qp_wr",
                     "at least one cap: max_qp_wr, max_recv_wr, max_cqe, max_send_sge, "
                     "max_recv_sge, max_inline_data, max_srq_wr, max_srq_sge, max_qp_rd_atom, "
                     "max_mr_size, atomic_cap (or vendor_id, vendor_part_id)");
  // How the target's driver refuses: its errno, and whether it clamps an inline request.
  auto error_number = unsigned_field(fault, index, "errno", 4095);
  if (!error_number.ok()) return std::move(error_number).take_error();
  if (error_number->has_value()) {
    if (**error_number == 0) return bad_field(index, "errno", "an errno from 1");
    rule.caps.refusal_errno = static_cast<int>(**error_number);
  }
  const json inline_mode = fault.value("inline", json("refuse_create"));
  if (inline_mode != "refuse_create" && inline_mode != "clamp")
    return bad_field(index, "inline", "\"refuse_create\" or \"clamp\"");
  rule.caps.clamp_inline = inline_mode == "clamp";
  return Status{};
}

Status parse_action(const json& fault, size_t index, FaultRule& rule) {
  switch (rule.kind) {
    case FaultKind::kRewriteStatus: return parse_status(fault, index, rule);
    case FaultKind::kCorruptData:
      if (auto data = parse_data(fault, index, rule); !data.ok()) return data;
      if (rule.data == DataAction::kKeep)
        return bad_field(index, "data", "\"scribble\" or \"suppress\"");
      return Status{};
    case FaultKind::kFailPost: {
      auto error_number = unsigned_field(fault, index, "errno", 4095);
      if (!error_number.ok()) return std::move(error_number).take_error();
      if (error_number->value_or(0) == 0) return bad_field(index, "errno", "an errno from 1");
      rule.error_number = static_cast<int>(**error_number);
      return Status{};
    }
    case FaultKind::kLimits: return parse_limits(fault, index, rule);
    case FaultKind::kObserve:
    case FaultKind::kDropCompletion:
    case FaultKind::kDuplicateCompletion: return Status{};
  }
  return Status{};
}

Result<FaultRule> parse_rule(const json& fault, size_t index) {
  if (!fault.is_object()) return bad_field(index, "", "an object");
  FaultRule rule;
  const json kind = fault.value("kind", json("rewrite_status"));
  const auto* named = std::find_if(kKindNames.begin(), kKindNames.end(),
                                   [&](const KindName& entry) { return kind == entry.name; });
  if (named == kKindNames.end())
    return bad_field(index, "kind",
                     "rewrite_status, corrupt_data, drop_completion, duplicate_completion, "
                     "fail_post, limits or observe");
  rule.kind = named->kind;
  if (auto action = parse_action(fault, index, rule); !action.ok()) return action.error();
  if (rule.kind != FaultKind::kLimits && rule.kind != FaultKind::kObserve) {
    if (auto firing = parse_firing(fault, index, rule); !firing.ok()) return firing.error();
  }
  if (auto filters = parse_filters(fault, index, rule); !filters.ok()) return filters.error();
  return rule;
}

}  // namespace

bool FaultRule::fires(std::mt19937_64& random) {
  ++matched;
  if (nth != 0) return matched == nth;
  if (every != 0) return matched % every == 0;
  return std::uniform_real_distribution<double>(0, 1)(random) < probability;
}

std::string FaultRule::kind_name() const {
  for (const auto& entry : kKindNames)
    if (entry.kind == kind) return entry.name;
  return "rewrite_status";
}

Result<FaultPlanRules> parse_fault_rules(const json& plan) {
  if (!plan.is_object() || !plan.contains("faults") || !plan.at("faults").is_array()) {
    return Error{ErrorCode::kInvalidArgument,
                 "FAULTLINE_FAULTS: expected {\"faults\": [...]} at the top"};
  }
  FaultPlanRules parsed;
  if (plan.contains("seed")) {
    if (!plan.at("seed").is_number_unsigned())
      return Error{ErrorCode::kInvalidArgument, "FAULTLINE_FAULTS: /seed: expected an integer"};
    parsed.seed = plan.at("seed").get<uint64_t>();
  }
  const json& faults = plan.at("faults");
  for (size_t i = 0; i < faults.size(); ++i) {
    auto rule = parse_rule(faults[i], i);
    if (!rule.ok()) return std::move(rule).take_error();
    parsed.rules.push_back(std::move(rule).value());
  }
  return parsed;
}

Result<FaultPlanRules> fault_rules_from_environment() {
  const char* value = std::getenv("FAULTLINE_FAULTS");
  if (value == nullptr || *value == '\0') return FaultPlanRules{};
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
