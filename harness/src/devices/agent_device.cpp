#include "devices/agent_device.hpp"

#include <filesystem>
#include <fstream>

#include "faultline/harness/base/net_address.hpp"
#include "faultline/harness/devices/device_listing.hpp"
#include "faultline/transports/json.hpp"
#include "faultline/transports/target.hpp"

namespace faultline::harness {

namespace {

namespace fs = std::filesystem;

bool is_socket_provider(const std::string& provider) {
  return provider == "tcp" || provider == "sockets" || provider == "udp";
}

std::string first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::string rdma_device_on(const std::string& interface, const std::string& sysfs_root) {
  std::error_code error;
  const fs::path devices = fs::path(sysfs_root) / "class/infiniband";
  for (const auto& device : fs::directory_iterator(devices, error)) {
    for (const auto& port : fs::directory_iterator(device.path() / "ports", error)) {
      for (const auto& ndev : fs::directory_iterator(port.path() / "gid_attrs/ndevs", error)) {
        if (first_line(ndev.path()) == interface) return device.path().filename().string();
      }
    }
  }
  return "";
}

namespace {

// The device the route to the coordinator leaves by, or `asked` unchanged.
transports::Target on_route(const transports::Target& asked, const std::string& local_address,
                            std::string& why, const std::string& sysfs_root) {
  transports::Target chosen = asked.with_defaults();
  const std::string interface = interface_with_address(local_address);
  if (interface.empty()) return asked;
  const std::string from = "the interface of " + local_address +
                           ", this host's address toward the coordinator; --device chooses another";
  if (chosen.transport == "ofi" && is_socket_provider(chosen.provider)) {
    // Only a domain the provider really has: an interface it does not list stays unchosen.
    if (!list_devices({chosen.transport, chosen.provider, interface}).ok()) return asked;
    chosen.device = interface;
    why = "device " + interface + " (" + from + ")";
    return chosen;
  }
  if (chosen.transport == "verbs") {
    const std::string device = rdma_device_on(interface, sysfs_root);
    if (device.empty()) return asked;
    chosen.device = device;
    why = "device " + device + " (on " + interface + ", " + from + ")";
    return chosen;
  }
  return asked;
}

}  // namespace

transports::Target target_toward(const transports::Target& asked, const std::string& local_address,
                                 std::string& why, const std::string& sysfs_root) {
  if (!asked.device.empty()) return asked;
  transports::Target chosen =
      local_address.empty() ? asked : on_route(asked, local_address, why, sysfs_root);
  if (!chosen.device.empty()) return chosen;
  // No device on the route: the one the transport opens by default, named, so that reports
  // and metrics say which it was.
  chosen = chosen.with_defaults();
  if (auto opened = transports::open_target_device(chosen); opened.ok()) {
    chosen.device = opened.value()->info().name;
    why = "device " + chosen.device + " (the transport's default; --device chooses another)";
  }
  return chosen;
}

nlohmann::json DeviceHost::devices(const std::string& transport) const {
  auto listed = list_devices({transport, "", ""});
  if (!listed.ok()) return nlohmann::json::array();
  return listed.value();
}

transports::Target DeviceHost::target_toward(const transports::Target& asked,
                                             const std::string& local_address,
                                             std::string& why) const {
  return harness::target_toward(asked, local_address, why);
}

}  // namespace faultline::harness
