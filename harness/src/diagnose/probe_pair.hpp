#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "faultline/harness/scenario/builtin_scenarios.hpp"
#include "faultline/transports/local_pair.hpp"

namespace faultline::harness::diagnose {

/// What the in-process layers (L0 to L2) probe: the target, with the injected faults.
struct ProbeContext {
  transports::Target target;
  nlohmann::json inject_faults = nlohmann::json::array();  ///< fault entries, without a role

  /// Opens the target's device, behind the fault decorator when a fault is injected.
  Result<std::unique_ptr<transports::Device>> open() const;
  /// What the opened device says of itself (limits as the injected faults leave them).
  Result<transports::DeviceInfo> device_info() const;
};

/// The local pair the probes run on: two devices of the target (behind the injected faults)
/// with one endpoint each, connected.
using ProbePair = transports::LocalPair;

/// Opens the probes' pair on `context` with `config` on both sides.
Result<std::unique_ptr<ProbePair>> open_probe_pair(const ProbeContext& context,
                                                   const transports::EndpointConfig& config);

/// The next completion of `side`, driving the other side meanwhile; a timeout is an error
/// naming what was waited for.
Result<transports::Completion> next_completion(ProbePair& pair, ProbePair::Side side,
                                               std::chrono::milliseconds timeout,
                                               const std::string& waiting_for);

/// Sends `length` bytes of a checked pattern from A to B (send/recv), inline or not, and
/// says what went wrong: a refused post, a completion status, a length or a byte that differs.
Status send_checked(ProbePair& pair, size_t length, bool inline_data,
                    std::span<const size_t> segment_lengths = {});

}  // namespace faultline::harness::diagnose
