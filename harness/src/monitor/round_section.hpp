// A monitor round as its report holds it: the `monitor` section built from the round's runs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/harness/control/coordinator.hpp"
#include "faultline/harness/monitor/localization.hpp"

namespace faultline::harness::monitor {

/// The round's agents (names, labels, what their NICs showed; those lost during the round
/// too) and pairs (verdicts, round trips from the probe's initiator side), from the
/// coordinator's records and the runs.
struct RoundInput {
  std::vector<MonitoredAgent> agents;
  std::vector<PairResult> pairs;
};
RoundInput round_input(const std::vector<AgentRecord>& agents,
                       const std::vector<ScenarioRun>& runs);

/// The report's `monitor` section (reports/schema/report.schema.json): the round, its agents
/// with their health, its pairs with their state, and the suspects with their evidence.
nlohmann::json round_section(uint64_t round, const std::string& started_at, double seconds,
                             const RoundInput& input, const Localization& found,
                             const LocalizationSettings& settings, double interval_seconds);

}  // namespace faultline::harness::monitor
