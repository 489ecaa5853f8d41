#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "faultline/core/status.hpp"
#include "faultline/harness/control/channel.hpp"

namespace faultline::harness {

/// What the scenario engine calls to reach its peers and report its progress: endpoint info
/// exchange, barriers and progress steps. Calls block until the peers answer or a deadline
/// passes. The control plane implements it over a scenario child's channel (CoordinatorLink).
class ScenarioLink {
 public:
  virtual ~ScenarioLink() = default;
  /// Sends this side's endpoint info; returns the peer's.
  virtual Result<nlohmann::json> exchange(const nlohmann::json& info) = 0;
  /// Waits until the peer reaches the barrier of the same name.
  virtual Status barrier(const std::string& name) = 0;
  /// Records the step about to run (shown as the last step if the process dies).
  virtual void step(const std::string& name) = 0;
  /// Called every few milliseconds while `exchange` or `barrier` waits: libfabric's manual
  /// progress needs the target of an RDMA write to keep calling into the provider.
  virtual void set_progress(std::function<void()> progress) = 0;
};

/// A scenario child's link to the coordinator, through its agent's channel.
class CoordinatorLink final : public ScenarioLink {
 public:
  CoordinatorLink(control::Channel& channel, uint64_t run_id, std::chrono::milliseconds deadline)
      : channel_(channel), run_id_(run_id), deadline_(deadline) {}

  Result<nlohmann::json> exchange(const nlohmann::json& info) override;
  Status barrier(const std::string& name) override;
  void step(const std::string& name) override;
  void set_progress(std::function<void()> progress) override { progress_ = std::move(progress); }

 private:
  Result<nlohmann::json> await(std::string_view type, const std::string& name);

  control::Channel& channel_;
  uint64_t run_id_;
  std::chrono::milliseconds deadline_;
  std::function<void()> progress_;
};

}  // namespace faultline::harness
