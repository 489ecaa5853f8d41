#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "faultline/harness/builtin_scenarios.hpp"
#include "faultline/transports/transport.hpp"

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

/// A registered buffer of a probe.
struct ProbeBuffer {
  std::vector<std::byte> bytes;
  std::unique_ptr<transports::MemoryRegion> region;
  transports::Segment segment(size_t offset, size_t length) {
    return {bytes.data() + offset, static_cast<uint32_t>(length), region.get()};
  }
};

/// Two devices of the target with one endpoint each, connected: the local pair the probes
/// run on. Owns the buffers it registers; endpoints go first when it is destroyed.
class ProbePair {
 public:
  enum Side { kA, kB };
  static Result<std::unique_ptr<ProbePair>> open(
      const ProbeContext& context, const transports::EndpointConfig& config);
  ~ProbePair();

  transports::Endpoint& endpoint(Side side) { return side == kA ? *a_ : *b_; }
  transports::Device& device(Side side) { return side == kA ? *device_a_ : *device_b_; }
  Result<ProbeBuffer*> buffer(Side side, size_t length);
  /// The next completion of `side`, driving the other side meanwhile (manual-progress
  /// providers need it); a timeout is an error naming what was waited for.
  Result<transports::Completion> next(Side side, std::chrono::milliseconds timeout,
                                                  const std::string& waiting_for);

 private:
  std::unique_ptr<transports::Device> device_a_;
  std::unique_ptr<transports::Device> device_b_;
  std::unique_ptr<transports::Endpoint> a_;
  std::unique_ptr<transports::Endpoint> b_;
  std::vector<std::unique_ptr<ProbeBuffer>> buffers_;
  std::deque<transports::Completion> backlog_[2];
};

/// Sends `length` bytes of a checked pattern from A to B (send/recv), inline or not, and
/// says what went wrong: a refused post, a completion status, a length or a byte that differs.
Status send_checked(ProbePair& pair, size_t length, bool inline_data,
                                std::span<const size_t> segment_lengths = {});

}  // namespace faultline::harness::diagnose
