#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::transports {

/// Every transport compiled into this build (per FAULTLINE_WITH_OFI / FAULTLINE_WITH_VERBS),
/// in a fixed order. The one place transports are registered; nothing registers itself.
std::vector<std::unique_ptr<Transport>> registered_transports();

/// The transport named `name`, or kNotFound listing the registered ones.
Result<std::unique_ptr<Transport>> find_transport(std::string_view name);

}  // namespace faultline::transports
