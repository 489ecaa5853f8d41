#include "faultline/harness/devices/device_listing.hpp"

#include <set>

#include "faultline/core/join.hpp"
#include "faultline/transports/registry.hpp"

namespace faultline::harness {

namespace {

using transports::DeviceInfo;

std::string join(const std::set<std::string>& names) {
  return names.empty() ? "none" : faultline::join(names);
}

}  // namespace

Result<std::vector<DeviceInfo>> list_devices(const DeviceFilter& filter) {
  std::set<std::string> transport_names;
  std::vector<DeviceInfo> all;
  for (const auto& transport : transports::registered_transports()) {
    transport_names.insert(std::string(transport->name()));
    if (!filter.transport.empty() && transport->name() != filter.transport) continue;
    auto devices = transport->list_devices();
    if (!devices.ok()) return std::move(devices).take_error();
    for (auto& device : devices.value()) all.push_back(std::move(device));
  }
  if (!filter.transport.empty() && transport_names.count(filter.transport) == 0) {
    return Error{ErrorCode::kNotFound, "unknown transport '" + filter.transport +
                                           "'; transports present: " + join(transport_names)};
  }

  std::set<std::string> providers;
  std::vector<DeviceInfo> of_provider;
  for (auto& device : all) {
    providers.insert(device.provider);
    if (filter.provider.empty() || device.provider == filter.provider ||
        device.native_provider == filter.provider) {
      of_provider.push_back(std::move(device));
    }
  }
  if (!filter.provider.empty() && of_provider.empty()) {
    return Error{ErrorCode::kNotFound, "unknown provider '" + filter.provider +
                                           "'; providers present: " + join(providers)};
  }

  std::set<std::string> device_names;
  std::vector<DeviceInfo> selected;
  for (auto& device : of_provider) {
    device_names.insert(device.name);
    if (filter.device.empty() || device.name == filter.device)
      selected.push_back(std::move(device));
  }
  if (!filter.device.empty() && selected.empty()) {
    return Error{ErrorCode::kNotFound,
                 "unknown device '" + filter.device + "'; devices present: " + join(device_names)}
        .with_hint(
            "an ofi device is a libfabric domain (a network interface for tcp and "
            "sockets, 'shm' for shm); a verbs device is an RDMA device (ibv_devices)");
  }
  return selected;
}

}  // namespace faultline::harness
