// One side's fault plan from a scenario's `faults` block: the faults of the language the fault
// decorator applies, for this role and rank.
#include "faultline/core/fnv1a.hpp"
#include "faultline/harness/scenario/scenario_runner.hpp"

namespace faultline::harness {

using nlohmann::json;
using namespace transports::fault;

uint64_t side_seed(uint64_t run_seed, const std::string& scenario_id, const std::string& role) {
  uint64_t hash = kFnv1aBasis ^ run_seed;
  constexpr std::byte kSeparator{0xff};
  for (const std::string* text : {&scenario_id, &role}) {
    hash = fnv1a(std::as_bytes(std::span(*text)), hash);
    hash = fnv1a({&kSeparator, 1}, hash);
  }
  return hash;
}

Result<std::vector<FaultSpec>> side_faults(const json& document, const std::string& role,
                                           size_t rank) {
  std::vector<FaultSpec> side;
  const json faults = document.value("faults", json::array());
  for (size_t i = 0; i < faults.size(); ++i) {
    auto fault = parse_fault(faults[i], kDecorator | kProtocolHook, "/faults/" + std::to_string(i));
    if (!fault.ok()) return std::move(fault).take_error();
    if (fault->role != role || (fault->rank && static_cast<size_t>(*fault->rank) != rank)) continue;
    side.push_back(std::move(fault).value());
  }
  return side;
}

Result<FaultPlan> fault_plan_for(const json& document, const std::string& role, uint64_t seed,
                                 size_t rank) {
  auto faults = side_faults(document, role, rank);
  if (!faults.ok()) return std::move(faults).take_error();
  FaultPlan plan;
  plan.seed = seed;
  // The protocol's own mutations are applied by its engine (kv_ops), not the decorator.
  for (FaultSpec& fault : faults.value())
    if ((fault.info().appliers & kDecorator) != 0) plan.faults.push_back(std::move(fault));
  return plan;
}

}  // namespace faultline::harness
