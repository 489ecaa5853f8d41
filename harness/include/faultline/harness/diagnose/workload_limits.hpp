#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/transports/types.hpp"

namespace faultline::harness::diagnose {

/// One endpoint a workload creates: its values, each a number or a formula.
struct WorkloadEndpoint {
  std::string name;                   ///< "" for a file's single `endpoint`; else its key
  transports::EndpointConfig config;  ///< derivations name each formula with its inputs
  std::set<std::string> fields;       ///< the endpoint fields the file sets
};

/// A workload's endpoint configurations from a `--limits` file, each value a number or a
/// formula over the file's inputs, checked in L1 against the device (or a profile's limits).
/// One endpoint:
///   {"workload": "DeepEP hybrid-ep", "inputs": {"max_tokens_per_rank": 65536},
///    "endpoint": {"send_depth": "3 * max_tokens_per_rank + 1", "recv_depth": 1024},
///    "device_limits": {"max_qp_wr": 65535}}
/// or several, by name: "endpoints": {"dispatch": {...}, "combine": {...}}.
struct Workload {
  std::string name;
  std::string source;
  std::vector<WorkloadEndpoint> endpoints;
  std::map<std::string, uint64_t> device_limits;  ///< a profile's limits instead of the device's
};

/// Reads and evaluates a workload file; a problem names the file, the field and what was
/// expected.
Result<Workload> load_workload(const std::string& path);

}  // namespace faultline::harness::diagnose
