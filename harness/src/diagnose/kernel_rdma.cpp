#include "kernel_rdma.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "faultline/core/join.hpp"

namespace faultline::harness::diagnose {

namespace {

// Kernel modules of the RDMA stack and the NIC drivers faultline has profiles for.
constexpr const char* kRdmaModules[] = {
    "ib_core",        "ib_uverbs", "rdma_ucm", "rdma_rxe", "siw",   "mlx5_ib", "mlx4_ib",
    "hns_roce_hw_v2", "bnxt_re",   "irdma",    "efa",      "erdma", "qedr",    "rdma_cm"};

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error))
    names.push_back(entry.path().filename().string());
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  return names.empty() ? "none" : join(names);
}

}  // namespace

KernelRdmaState kernel_rdma_state() {
  const auto devices = entries("/sys/class/infiniband");
  const auto nodes = entries("/dev/infiniband");
  const bool modules_known = std::filesystem::exists("/proc/modules");
  std::ifstream modules_file("/proc/modules");
  std::set<std::string> loaded;
  for (std::string line; std::getline(modules_file, line);) {
    const std::string name = line.substr(0, line.find(' '));
    for (const char* rdma : kRdmaModules)
      if (name == rdma) loaded.insert(name);
  }
  KernelRdmaState state;
  state.evidence = "kernel RDMA devices (/sys/class/infiniband): " + joined(devices) +
                   "; /dev/infiniband: " + joined(nodes) + "; RDMA modules loaded: " +
                   (modules_known ? joined({loaded.begin(), loaded.end()})
                                  : std::string("unknown (no /proc/modules)"));
  if (devices.empty() && modules_known && loaded.count("ib_core") == 0) {
    state.hint =
        "the kernel's RDMA core is not loaded: modprobe ib_uverbs and the NIC's driver "
        "(mlx5_ib, hns_roce_hw_v2, bnxt_re, irdma, efa, erdma), or for Soft-RoCE modprobe "
        "rdma_rxe";
  } else if (devices.empty()) {
    state.hint =
        "the kernel has no RDMA device: for Soft-RoCE, rdma link add rxe0 type rxe netdev "
        "IFACE; for a NIC, check its driver in dmesg; or use --transport ofi";
  } else if (nodes.empty()) {
    state.hint = "the kernel has " + joined(devices) +
                 " but no /dev/infiniband: modprobe ib_uverbs (user-space verbs need it)";
  } else {
    state.hint = "the kernel has " + joined(devices) +
                 ": if libibverbs lists none of them, its provider library is missing "
                 "(install ibverbs-providers); otherwise name one with --device";
  }
  return state;
}

}  // namespace faultline::harness::diagnose
