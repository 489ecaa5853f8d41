#pragma once

#include <string>

#include "faultline/harness/control/agent.hpp"
#include "faultline/transports/target.hpp"

namespace faultline::harness {

/// The target an agent uses when its --device was left out: the device that reaches the
/// coordinator, so a pair on two hosts exchanges addresses each can reach (a default of `lo`
/// gives every pair across hosts "no completion"). `local_address` is this host's end of the
/// control connection; its interface is the ofi device of the socket providers (tcp, sockets,
/// udp) and, for verbs, names the RDMA device whose port sits on that interface. Where no
/// device is on the route (shm, a verbs device on another interface), the one the transport
/// opens by default, named. A target with a device stays as it is. `why` says what was
/// chosen and from what, for the agent's log.
transports::Target target_toward(const transports::Target& asked, const std::string& local_address,
                                 std::string& why, const std::string& sysfs_root = "/sys");

/// The RDMA device (and port) whose GID table is tied to network interface `interface`
/// (/sys/class/infiniband/DEV/ports/P/gid_attrs/ndevs/*), or "" when none is.
std::string rdma_device_on(const std::string& interface, const std::string& sysfs_root = "/sys");

/// An agent's host as this machine's devices describe it: `list_devices` for the hello,
/// `target_toward` for the device toward the coordinator.
class DeviceHost final : public AgentHost {
 public:
  nlohmann::json devices(const std::string& transport) const override;
  transports::Target target_toward(const transports::Target& asked,
                                   const std::string& local_address,
                                   std::string& why) const override;
};

}  // namespace faultline::harness
