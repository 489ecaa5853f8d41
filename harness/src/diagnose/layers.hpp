#pragma once

#include <functional>
#include <optional>

#include "faultline/harness/runs/local_run.hpp"

#include "faultline/harness/diagnose/diagnosis.hpp"
#include "faultline/harness/diagnose/workload_limits.hpp"
#include "probe_pair.hpp"

namespace faultline::harness::diagnose {

/// The endpoint configuration of the diagnosis's own traffic (L2): what L1 checks it fits.
transports::EndpointConfig workload_config(const transports::DeviceLimits& limits);

/// L0: the device and port present and active, GIDs, MTU, locked memory, what the provider
/// reports, and that the device opens.
std::vector<ProbeResult> probe_environment(const ProbeContext& context);
/// L1: the largest working inline size, depths, SGEs, CQ and MR size, by bisection of real
/// creates and posts, against what the device advertises; the workload's configuration fits.
std::vector<ProbeResult> probe_limits(const ProbeContext& context,
                                      const std::optional<Workload>& workload);
/// L2: send/recv, write, write with immediate and read around the MTU and the inline limit,
/// inline on and off, every byte checked.
std::vector<ProbeResult> probe_data_path(const ProbeContext& context);
/// The agents L3 and L4 run on, started by the first layer that needs them.
using AgentSource = std::function<Result<LocalAgents*>()>;

/// L3 and L4: scenarios of the catalog on a pair of agents (two local, or one local and the
/// --peer), with the injected faults.
std::vector<ProbeResult> probe_scenarios(const DiagnoseOptions& options,
                                         const nlohmann::json& inject_faults,
                                         const std::vector<std::string>& scenario_ids,
                                         const std::string& report_subdir,
                                         const AgentSource& agents);

/// A failing probe from an error: observed is the error, the hint its hint.
ProbeResult failed_probe(std::string name, std::string expected, const Error& error);

}  // namespace faultline::harness::diagnose
