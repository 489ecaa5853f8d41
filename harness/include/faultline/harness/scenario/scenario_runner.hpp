#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/harness/control/scenario_link.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"
#include "faultline/transports/fault/fault_device.hpp"

namespace faultline::harness {

/// The faults of `role` (at `rank` of a ring) in a scenario's `faults` block, read by the fault
/// language, or the error of the first fault that is not of it.
Result<std::vector<transports::fault::FaultSpec>> side_faults(const nlohmann::json& document,
                                                              const std::string& role,
                                                              size_t rank = 0);

/// The fault plan of `role` (at `rank` of a ring) from a scenario's `faults` block, seeded with
/// `seed`: the faults the decorator applies (a fault naming another rank is not this side's),
/// or the error of the first fault that is not of the fault language.
Result<transports::fault::FaultPlan> fault_plan_for(const nlohmann::json& document,
                                                    const std::string& role, uint64_t seed,
                                                    size_t rank = 0);

/// The seed of one side: the run's seed mixed with the scenario id and the role, so the
/// same --seed fires the same faults on the same side, whatever else runs.
uint64_t side_seed(uint64_t run_seed, const std::string& scenario_id, const std::string& role);

/// Runs the steps of `role` of a scenario file on `target`, in this process (a scenario
/// child). Skips with the reason when the target lacks what the scenario requires; the
/// outcome's details hold every step's note and every fault applied.
/// `rank` of `size`: this side's place in the run (0 or 1 of 2 in a pair).
ScenarioOutcome run_scenario_document(ScenarioLink& link, const nlohmann::json& document,
                                      const std::string& role, uint64_t run_seed,
                                      const transports::Target& target, size_t rank = 0,
                                      size_t size = 2);

}  // namespace faultline::harness
