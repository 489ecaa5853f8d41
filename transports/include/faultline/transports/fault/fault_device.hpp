#pragma once

#include <memory>
#include <string>
#include <vector>

#include "faultline/transports/fault/fault_spec.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::transports::fault {

/// What the decorator does to one side of a scenario: the faults of the language it applies
/// (each parsed for kDecorator), seeded so the same seed fires the same faults.
struct FaultPlan {
  uint64_t seed = 0;
  std::vector<FaultSpec> faults;

  bool empty() const { return faults.empty(); }
};

/// Every `kind` an AppliedFault can have.
const std::vector<std::string>& applied_fault_kinds();

/// One fault the decorator applied, in the order applied.
struct AppliedFault {
  std::string kind;    ///< "rewrite_status", "drop_completion", "fail_post", "inline_off", ...
  std::string detail;  ///< "RDMA_WRITE wr_id 0x3 SUCCESS -> REM_ACCESS_ERR (2nd match)"
};

/// Where the decorator records what it did; shared by the device and its endpoints.
/// Not thread-safe, like the endpoints it serves.
using FaultLog = std::vector<AppliedFault>;

/// Wraps `device` so that every endpoint made from it obeys `plan` (libfabric's hook
/// providers and Mooncake's FaultProxyTransport are the precedent). The wrapper owns the
/// device. Callers leave the decorator out of the path when the plan is empty.
std::unique_ptr<Device> wrap_device(std::unique_ptr<Device> device, FaultPlan plan,
                                    std::shared_ptr<FaultLog> log);

}  // namespace faultline::transports::fault
