#pragma once

#include <string>

namespace faultline::testing {

/// One transport, provider and device that a conformance test runs on.
struct TestTarget {
  std::string transport;
  std::string provider;
  std::string device;
  std::string label() const { return transport + "/" + (provider.empty() ? device : provider); }
};

TestTarget ofi_tcp();
TestTarget ofi_shm();
TestTarget ofi_sockets();
/// The verbs device under test: $FAULTLINE_VERBS_DEVICE, or the first active device.
TestTarget verbs_device();

}  // namespace faultline::testing
