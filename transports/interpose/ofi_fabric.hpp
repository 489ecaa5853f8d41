#pragma once

#include <rdma/fabric.h>

#include <string>

namespace faultline::transports::interpose {

/// Wraps `fabric`, opened by the provider `layer`: the domains, CQs and endpoints opened
/// through it get the plan. `through` says how it was reached ("FI_HOOK": libfabric ran the
/// hook; "LD_PRELOAD": the fallback's fi_fabric). False when it was wrapped already.
bool wrap_fabric(fid_fabric* fabric, const std::string& layer, const char* through);

}  // namespace faultline::transports::interpose
