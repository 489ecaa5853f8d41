#include "faultline/harness/diagnose/workload_targets.hpp"

namespace faultline::harness::diagnose {

namespace {

// One endpoint's values against one target's limits.
void check_endpoint(const WorkloadEndpoint& endpoint, const DeviceProfile& target,
                    std::vector<TargetCheck>& checks) {
  const transports::EndpointConfig& config = endpoint.config;
  const struct {
    const char* field;
    uint32_t value;
    const char* limit;
    const char* fallback;  ///< verbs' max_qp_wr bounds both queues
  } fields[] = {
      {"send_depth", config.send_depth, "max_qp_wr", nullptr},
      {"recv_depth", config.recv_depth, "max_recv_wr", "max_qp_wr"},
      {"cq_depth", config.cq_depth, "max_cqe", nullptr},
      {"max_send_sge", config.max_send_sge, "max_send_sge", nullptr},
      {"max_recv_sge", config.max_recv_sge, "max_recv_sge", nullptr},
      {"max_inline", config.max_inline, "max_inline_data", nullptr},
  };
  for (const auto& field : fields) {
    if (!endpoint.fields.contains(field.field)) continue;  // not set by the workload
    TargetCheck check{target.name, endpoint.name, field.field, std::to_string(field.value),
                      field.value, field.limit};
    if (auto derived = config.derivations.find(field.field); derived != config.derivations.end())
      check.derivation = derived->second;
    std::string limit = field.limit;
    if (!target.limits.contains(limit) && field.fallback != nullptr) limit = field.fallback;
    if (auto found = target.limits.find(limit); found != target.limits.end()) {
      check.limit = limit;
      check.allowed = found->second;
      check.source = target.source_of(limit);
      check.verdict = field.value <= found->second ? "fits" : "refused";
    } else {
      check.verdict = "unknown";
    }
    checks.push_back(std::move(check));
  }
}

}  // namespace

std::vector<TargetCheck> check_workload_against(const Workload& workload,
                                                const std::vector<DeviceProfile>& targets) {
  std::vector<TargetCheck> checks;
  for (const auto& target : targets)
    for (const auto& endpoint : workload.endpoints) check_endpoint(endpoint, target, checks);
  return checks;
}

}  // namespace faultline::harness::diagnose
