#pragma once

#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::harness {

/// Which devices to list; empty fields match everything.
struct DeviceFilter {
  std::string transport;
  std::string provider;
  std::string device;
};

/// Every device of every registered transport matching `filter`. A filter value that matches
/// nothing is kNotFound naming what is present at that level (transports, providers, devices).
Result<std::vector<transports::DeviceInfo>> list_devices(const DeviceFilter& filter);

}  // namespace faultline::harness
