#include "faultline/transports/fault/fault_device.hpp"

#include <algorithm>
#include <string>

#include "fault_endpoint.hpp"
#include "faultline/transports/limits_check.hpp"

namespace faultline::transports::fault {

const std::vector<std::string>& applied_fault_kinds() {
  static const std::vector<std::string> kinds = {
      "rewrite_status",       "drop_completion",   "delay_completion",
      "duplicate_completion", "replay_completion", "fail_post",
      "inline_off",           "inline_forced",     "limits",
      "segment_count"};
  return kinds;
}

namespace {

// Whether an endpoint needs the wrapper: some fault acts on its posts or completions.
bool acts_on_endpoints(const FaultPlan& plan) {
  return std::any_of(plan.faults.begin(), plan.faults.end(),
                     [](const FaultSpec& fault) { return fault.kind != FaultKind::kLimits; });
}

class FaultDevice : public Device {
 public:
  FaultDevice(std::unique_ptr<Device> inner, FaultPlan plan, std::shared_ptr<FaultLog> log)
      : inner_(std::move(inner)),
        plan_(std::move(plan)),
        log_(std::move(log)),
        info_(inner_->info()) {
    for (const FaultSpec& fault : plan_.faults) {
      if (fault.kind == FaultKind::kLimits) apply_limits(fault.caps);
      if (fault.kind == FaultKind::kInline) inline_mode_ = fault.inline_mode;
    }
  }

  const DeviceInfo& info() const override { return info_; }

  // The device reports the fault's limits. A value above what the device advertises cannot
  // make it larger: the device's own limit applies in addition, and the log says so.
  void apply_limits(const LimitCaps& caps) {
    const DeviceInfo& real = inner_->info();
    for (const LimitInfo& limit : limit_infos()) {
      const auto value = caps.cap(limit.name);
      if (!value || (limit.appliers & kDecorator) == 0) continue;
      const auto advertised = limit_value(real.limits, limit.name);
      std::string text =
          std::string(limit.name) + " " + std::to_string(*value) + " from " + caps.source;
      if (advertised && *value > *advertised) {
        text += ", in addition to the " + std::to_string(*advertised) + " " + real.name +
                " advertises, which still applies: a request between the two is refused by "
                "the device itself";
      } else {
        text += " instead of " + (advertised ? std::to_string(*advertised) : "no limit") +
                " that " + real.name + " advertises";
      }
      log_->push_back({"limits", text});
    }
    info_.limits = caps.applied_to(info_.limits);
    limits_source_ = caps.source.empty() ? "the scenario's limits fault" : caps.source;
  }

  Result<std::unique_ptr<MemoryRegion>> register_memory(void* addr, size_t length,
                                                        uint32_t access) override {
    return inner_->register_memory(addr, length, access);
  }

  Result<std::unique_ptr<Endpoint>> create_endpoint(const EndpointConfig& config) override {
    EndpointConfig changed = config;
    if (inline_mode_ == InlineMode::kOff && changed.max_inline != 0) {
      log_->push_back({"inline_off", "endpoint created with max_inline 0 instead of " +
                                         std::to_string(changed.max_inline)});
      changed.max_inline = 0;
    }
    if (!limits_source_.empty() && !changed.raw) {
      if (Status fits = check_endpoint_config(changed, info_.limits); !fits.ok()) {
        Error error = std::move(fits).take_error();
        error.where.device = info_.name;
        return std::move(error).with_hint("the device limits come from " + limits_source_ +
                                          "; a device with these limits refuses this endpoint");
      }
    }
    auto endpoint = inner_->create_endpoint(changed);
    if (!endpoint.ok()) return endpoint;
    if (!acts_on_endpoints(plan_)) return endpoint;
    return std::unique_ptr<Endpoint>(
        std::make_unique<FaultEndpoint>(std::move(endpoint).value(), plan_, log_, stale_, counts_));
  }

 private:
  std::unique_ptr<Device> inner_;
  FaultPlan plan_;
  std::shared_ptr<FaultLog> log_;
  InlineMode inline_mode_ = InlineMode::kNone;
  std::string limits_source_;  // empty: no limits fault
  std::shared_ptr<std::vector<Completion>> stale_ = std::make_shared<std::vector<Completion>>();
  std::shared_ptr<FaultCounts> counts_ = std::make_shared<FaultCounts>(plan_.seed);
  DeviceInfo info_;
};

}  // namespace

std::unique_ptr<Device> wrap_device(std::unique_ptr<Device> device, FaultPlan plan,
                                    std::shared_ptr<FaultLog> log) {
  return std::make_unique<FaultDevice>(std::move(device), std::move(plan), std::move(log));
}

}  // namespace faultline::transports::fault
