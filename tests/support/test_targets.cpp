#include "support/test_targets.hpp"

#include <cstdlib>

namespace faultline::testing {

Target ofi_tcp() { return {"ofi", "tcp", "lo"}; }
Target ofi_shm() { return {"ofi", "shm", "shm"}; }
Target ofi_sockets() { return {"ofi", "sockets", "lo"}; }

Target verbs_device() {
  const char* device = std::getenv("FAULTLINE_VERBS_DEVICE");
  return {"verbs", "", device != nullptr ? device : ""};
}

}  // namespace faultline::testing
