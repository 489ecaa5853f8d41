#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "faultline/transports/registered_buffer.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::transports {

/// Both ends of a connection in one process: two devices of one target (each opened on its
/// own, as two agents would), one endpoint on each, connected to each other. What tests,
/// diagnose's probes and the benchmarks drive. Waiting on one side polls the other as well,
/// since manual-progress providers (shm, rxm's rendezvous) only move data while both poll;
/// what the other side's polls bring is kept for it. Not thread-safe as a whole, but each
/// side's endpoint may be driven by a thread of its own. Endpoints go first when it is
/// destroyed, then the buffers it registered, then the devices.
class LocalPair {
 public:
  enum Side { kA = 0, kB = 1 };
  using DeviceOpener = std::function<Result<std::unique_ptr<Device>>()>;
  /// The endpoint configuration of a side, from what its device says of itself.
  using ConfigFor = std::function<EndpointConfig(const DeviceInfo&)>;

  /// Opens two devices with `opener`, an endpoint on each as `config_for` says, and connects
  /// them both ways.
  static Result<std::unique_ptr<LocalPair>> open(const DeviceOpener& opener,
                                                 const ConfigFor& config_for);
  static Result<std::unique_ptr<LocalPair>> open(const DeviceOpener& opener,
                                                 const EndpointConfig& config_a,
                                                 const EndpointConfig& config_b);
  ~LocalPair();
  LocalPair(const LocalPair&) = delete;
  LocalPair& operator=(const LocalPair&) = delete;

  Endpoint& endpoint(Side side) { return *sides_[side].endpoint; }
  Device& device(Side side) { return *sides_[side].device; }
  const DeviceInfo& info() const { return sides_[kA].device->info(); }

  /// A zero-filled buffer registered on `side`'s device, owned by the pair (at least one byte
  /// is registered, so an empty buffer still has a region).
  Result<RegisteredBuffer*> buffer(Side side, size_t length, uint32_t access = kAccessAll);

  /// The next completion of `side` within `timeout` (nullopt when none came), polling the
  /// other side meanwhile.
  Result<std::optional<Completion>> next(Side side, std::chrono::milliseconds timeout);
  /// Every completion of `side` until none has come for `quiet`, progressing both sides.
  Result<std::vector<Completion>> drain(Side side, std::chrono::milliseconds quiet);

 private:
  struct End {
    std::unique_ptr<Device> device;
    std::vector<std::unique_ptr<RegisteredBuffer>> buffers;
    std::unique_ptr<Endpoint> endpoint;  // last: destroyed first
    std::deque<Completion> backlog;
  };
  LocalPair() = default;
  /// Polls both endpoints once without waiting (`side` for up to `wait`), into the backlogs.
  Status progress(Side side, std::chrono::milliseconds wait);

  End sides_[2];
};

}  // namespace faultline::transports
