#pragma once

#include <memory>
#include <string>

#include "faultline/core/status.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::transports {

/// The libfabric provider a run uses when none is named: tcp (tcp;ofi_rxm), on every Linux.
inline constexpr const char* kOfiDefaultProvider = "tcp";

/// What a run, a scenario side, a probe, a benchmark or a test uses: a transport, its
/// provider (ofi) and a device. Empty provider and device mean the transport's defaults.
struct Target {
  std::string transport = "ofi";
  std::string provider;
  std::string device;

  /// This target with the ofi default provider filled in, as reports and metrics name it.
  Target with_defaults() const;
  /// "ofi/tcp", "verbs/rxe0".
  std::string label() const;
  /// The label with the device where it lacks one: "ofi/tcp eth0", "ofi/shm", "verbs/rxe0".
  std::string text() const;
};

/// Opens the target's device through the transport registry (an unknown transport, provider
/// or device is an error naming what is present).
Result<std::unique_ptr<Device>> open_target_device(const Target& target);

}  // namespace faultline::transports
