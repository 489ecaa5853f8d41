#pragma once

#include <string>

namespace faultline::harness::diagnose {

/// What the kernel offers for verbs, read from /sys/class/infiniband, /dev/infiniband and
/// /proc/modules: the facts as evidence, and the likely reason a verbs device is missing.
struct KernelRdmaState {
  std::string evidence;  ///< "kernel RDMA devices: none; /dev/infiniband: absent; modules: ..."
  std::string hint;      ///< what to do about the first thing missing
};

KernelRdmaState kernel_rdma_state();

}  // namespace faultline::harness::diagnose
