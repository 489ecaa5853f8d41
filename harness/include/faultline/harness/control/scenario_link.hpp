#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "faultline/core/status.hpp"
#include "faultline/harness/control/channel.hpp"

namespace faultline::harness {

/// What a scenario child uses to talk to the coordinator (through its agent): endpoint info
/// exchange, barriers, and progress steps. Calls block until the coordinator answers or the
/// deadline passes.
class ScenarioLink {
 public:
  ScenarioLink(control::Channel& channel, uint64_t run_id, std::chrono::milliseconds deadline)
      : channel_(channel), run_id_(run_id), deadline_(deadline) {}

  /// Sends this side's endpoint info; returns the peer's.
  Result<nlohmann::json> exchange(const nlohmann::json& info);
  /// Waits until the peer reaches the barrier of the same name.
  Status barrier(const std::string& name);
  /// Records the step about to run (shown as the last step if the process dies).
  void step(const std::string& name);
  /// Called every few milliseconds while `exchange` or `barrier` waits: libfabric's manual
  /// progress needs the target of an RDMA write to keep calling into the provider.
  void set_progress(std::function<void()> progress) { progress_ = std::move(progress); }

 private:
  Result<nlohmann::json> await(std::string_view type, const std::string& name);

  control::Channel& channel_;
  uint64_t run_id_;
  std::chrono::milliseconds deadline_;
  std::function<void()> progress_;
};

}  // namespace faultline::harness
