#include "faultline/harness/base/metrics_plan.hpp"

#include "faultline/harness/base/verdict.hpp"
#include "faultline/transports/completion_status.hpp"
#include "faultline/transports/fault/fault_device.hpp"
#include "faultline/transports/registry.hpp"

namespace faultline::harness {

reports::BuildInfo build_info() {
  std::string transports;
  for (const auto& transport : transports::registered_transports())
    transports += (transports.empty() ? "" : ",") + std::string(transport->name());
  return {FAULTLINE_VERSION, transports};
}

reports::MetricsPlan metrics_plan(const std::vector<std::string>& scenarios,
                                  const std::vector<std::string>& sut_verdicts) {
  reports::MetricsPlan plan;
  plan.scenarios = scenarios;
  plan.sut = !sut_verdicts.empty();
  auto& values = plan.label_values;
  for (Verdict verdict : kAllVerdicts) values["verdict"].emplace_back(to_string(verdict));
  values["sut_verdict"] = sut_verdicts;
  for (const auto& row : transports::kCompletionStatusTable)
    values["status"].emplace_back(row.name);
  values["kind"] = transports::fault::applied_fault_kinds();
  for (auto op : transports::kAllOpcodes) values["op"].emplace_back(transports::to_string(op));
  return plan;
}

}  // namespace faultline::harness
