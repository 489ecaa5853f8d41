#pragma once

#include <string>
#include <vector>

#include "faultline/harness/devices/device_profiles.hpp"
#include "faultline/harness/diagnose/workload_limits.hpp"

namespace faultline::harness::diagnose {

/// One of a workload's endpoint values held against one target's limit.
struct TargetCheck {
  std::string target;
  std::string endpoint;    ///< the workload's name for the endpoint ("dispatch"), or ""
  std::string field;       ///< send_depth, recv_depth, cq_depth, max_send_sge, ...
  std::string derivation;  ///< "3 x max_tokens_per_rank 65536 + 1", or the number
  uint64_t value = 0;
  std::string limit;                ///< the profile's limit: max_qp_wr, ...
  std::optional<uint64_t> allowed;  ///< nullopt: the profile does not know it
  std::string source;
  std::string verdict;  ///< fits, refused, or unknown
};

/// Every value the workload sets, against every target (`diagnose --limits FILE --profile`).
std::vector<TargetCheck> check_workload_against(const Workload& workload,
                                                const std::vector<DeviceProfile>& targets);

}  // namespace faultline::harness::diagnose
