#include "faultline/transports/limits_check.hpp"

namespace faultline::transports {

std::string LimitViolation::describe() const {
  std::string text = field + " " + std::to_string(requested);
  if (!derivation.empty()) text += " (= " + derivation + ")";
  return text + " exceeds device " + limit_name + " " + std::to_string(limit);
}

std::vector<LimitViolation> find_limit_violations(const EndpointConfig& config,
                                                  const DeviceLimits& limits) {
  std::vector<LimitViolation> violations;
  auto check = [&](const char* field, uint64_t requested, const char* limit_name, uint64_t limit) {
    if (requested <= limit) return;
    auto derivation = config.derivations.find(field);
    violations.push_back({field, requested, limit_name, limit,
                          derivation == config.derivations.end() ? "" : derivation->second});
  };
  check("send_depth", config.send_depth, "max_qp_wr", limits.max_qp_wr);
  check("recv_depth", config.recv_depth, "max_recv_wr", limits.max_recv_wr);
  if (limits.max_cqe) check("cq_depth", config.effective_cq_depth(), "max_cqe", *limits.max_cqe);
  check("max_send_sge", config.max_send_sge, "max_send_sge", limits.max_send_sge);
  check("max_recv_sge", config.max_recv_sge, "max_recv_sge", limits.max_recv_sge);
  check("max_inline", config.max_inline, "max_inline_data", limits.max_inline_data);
  return violations;
}

Status check_endpoint_config(const EndpointConfig& config, const DeviceLimits& limits) {
  auto violations = find_limit_violations(config, limits);
  if (violations.empty()) return {};
  Error error;
  error.code = ErrorCode::kLimitExceeded;
  for (const auto& violation : violations) {
    if (!error.message.empty()) error.message += "; ";
    error.message += violation.describe();
  }
  error.hint =
      "lower the requested value to the device limit, or check the workload's sizing "
      "formula; `faultline devices` shows every limit";
  return error;
}

}  // namespace faultline::transports
