#include "support/test_targets.hpp"

#include <cstdlib>

namespace faultline::testing {

TestTarget ofi_tcp() { return {"ofi", "tcp", "lo"}; }
TestTarget ofi_shm() { return {"ofi", "shm", "shm"}; }
TestTarget ofi_sockets() { return {"ofi", "sockets", "lo"}; }

TestTarget verbs_device() {
  const char* device = std::getenv("FAULTLINE_VERBS_DEVICE");
  return {"verbs", "", device != nullptr ? device : ""};
}

}  // namespace faultline::testing
