// What a scenario side's device records for the report, shared by scenario files and the
// built-in probe: the side's faults (the decorator, its log), the traffic meter outermost (so
// it counts what the side sees, injected faults included), and the port counters' growth.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "faultline/transports/fault/fault_device.hpp"
#include "faultline/transports/meter/traffic_meter.hpp"
#include "faultline/transports/port_counters.hpp"

namespace faultline::harness {

class MeteredSide {
 public:
  /// Wraps `device` in `plan`'s faults (none when the plan is empty) and the traffic meter,
  /// and reads its port's counters.
  MeteredSide(std::unique_ptr<transports::Device> device, transports::fault::FaultPlan plan);

  /// The device the side works on; moved out once (scenario files keep it in their state).
  std::unique_ptr<transports::Device> take_device() { return std::move(device_); }
  transports::Device& device() { return *device_; }

  /// {"faults": {"seed", "applied"}, "traffic", "port_counters"}: a side's report details.
  nlohmann::json evidence() const;
  /// A built-in scenario's side details: evidence() and the side's `role`.
  nlohmann::json details(const std::string& role) const {
    nlohmann::json details = evidence();
    details["role"] = role;
    return details;
  }

 private:
  std::unique_ptr<transports::Device> device_;
  uint64_t seed_ = 0;
  std::shared_ptr<transports::fault::FaultLog> faults_;  // null when no fault was planned
  std::shared_ptr<transports::meter::TrafficCounts> traffic_;
  std::optional<transports::PortCounters> counters_before_;
};

}  // namespace faultline::harness
