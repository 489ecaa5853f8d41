#pragma once

#include <nlohmann/json.hpp>

namespace faultline::transports::interpose {

/// Appends `event` as one JSON line to FAULTLINE_FAULT_LOG, if set, with the pid, the
/// wall-clock time in ms and, where a launcher gave one, the rank. One write(2) per line on an
/// O_APPEND file, so the lines of several processes and threads never interleave.
void log_event(nlohmann::json event);

}  // namespace faultline::transports::interpose
