#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace faultline::transports {

/// The counters of one RDMA port as sysfs shows them: every file of
/// `<root>/<device>/ports/<port>/hw_counters` and `.../counters`, keyed "hw_counters/NAME" and
/// "counters/NAME". The IB data counters (`port_rcv_data`, `port_xmit_data` and their
/// legacy 64-bit forms) count 4-octet words; they are kept as sysfs gives them.
struct PortCounters {
  std::string device;
  uint32_t port = 0;
  std::map<std::string, uint64_t> values;
};

/// Reads the port's counters, or nullopt where the port has no sysfs directory (a libfabric
/// device, a machine without /sys/class/infiniband). Unreadable files are left out.
std::optional<PortCounters> read_port_counters(const std::string& device, uint32_t port,
                                               const std::string& root = "/sys/class/infiniband");

/// after - before for every counter that grew; counters that shrank (a reset) or vanished
/// are left out, as are those that did not change.
std::map<std::string, uint64_t> grown_counters(const PortCounters& before,
                                               const PortCounters& after);

}  // namespace faultline::transports
