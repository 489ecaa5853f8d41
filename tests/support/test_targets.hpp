#pragma once

#include "faultline/transports/target.hpp"

namespace faultline::testing {

using transports::Target;

Target ofi_tcp();
Target ofi_shm();
Target ofi_sockets();
/// The verbs device under test: $FAULTLINE_VERBS_DEVICE, or the first active device.
Target verbs_device();

}  // namespace faultline::testing
