#pragma once

#include <string_view>

#include "faultline/transports/completion_status.hpp"

namespace faultline::transports::verbs {

/// Maps an `enum ibv_wc_status` value to the generic status (one to one; an unknown value is
/// GENERAL_ERR, never success).
CompletionStatus completion_status_from_ibv(int ibv_wc_status);

}  // namespace faultline::transports::verbs
