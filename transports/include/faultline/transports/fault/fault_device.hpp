#pragma once

#include <memory>
#include <vector>

#include "faultline/transports/fault/fault_plan.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::transports::fault {

/// Where the decorator records what it did; shared by the device and its endpoints.
/// Not thread-safe, like the endpoints it serves.
using FaultLog = std::vector<AppliedFault>;

/// Wraps `device` so that every endpoint made from it obeys `plan` (libfabric's hook
/// providers and Mooncake's FaultProxyTransport are the precedent). The wrapper owns the
/// device. Callers leave the decorator out of the path when the plan is empty.
std::unique_ptr<Device> wrap_device(std::unique_ptr<Device> device, FaultPlan plan,
                                    std::shared_ptr<FaultLog> log);

}  // namespace faultline::transports::fault
