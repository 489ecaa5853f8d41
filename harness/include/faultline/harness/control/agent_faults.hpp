// An agent's own faults (--fault-file), for rehearsing what monitoring and alerting do when a
// NIC goes bad.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "faultline/core/status.hpp"

namespace faultline::harness {

/// The faults of `path`: a JSON array of entries as a scenario's `faults` block has them,
/// without `role` ([{"kind": "delay_completion", "opcode": "RECV", "every": 1, "delay_ms": 5}]),
/// applied to this agent's side of every scenario it runs. An absent file is no fault (an
/// empty array), so a fault is put in and taken out by writing and removing the file. A file
/// that is there but wrong is kInvalidArgument naming the file, the field and what was
/// expected.
Result<nlohmann::json> read_agent_faults(const std::string& path);

}  // namespace faultline::harness
