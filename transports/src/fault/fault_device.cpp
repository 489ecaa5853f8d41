#include "faultline/transports/fault/fault_device.hpp"

#include <string>

#include "fault_endpoint.hpp"
#include "faultline/transports/limits_check.hpp"

namespace faultline::transports::fault {

namespace {

class FaultDevice : public Device {
 public:
  FaultDevice(std::unique_ptr<Device> inner, FaultPlan plan, std::shared_ptr<FaultLog> log)
      : inner_(std::move(inner)),
        plan_(std::move(plan)),
        log_(std::move(log)),
        info_(inner_->info()) {
    if (!plan_.limits.empty()) apply_limits();
  }

  const DeviceInfo& info() const override { return info_; }

  // The device reports the fault's limits. A value above what the device advertises cannot
  // make it larger: the device's own limit applies in addition, and the log says so.
  void apply_limits() {
    const DeviceInfo& real = inner_->info();
    for (const auto& [name, value] : plan_.limits) {
      const auto advertised = limit_value(real.limits, name);
      std::string text = name + " " + std::to_string(value) + " from " + plan_.limits_source;
      if (advertised && value > *advertised) {
        text += ", in addition to the " + std::to_string(*advertised) + " " + real.name +
                " advertises, which still applies: a request between the two is refused by "
                "the device itself";
      } else {
        text += " instead of " + (advertised ? std::to_string(*advertised) : "no limit") +
                " that " + real.name + " advertises";
      }
      log_->push_back({"limits", text});
    }
    info_.limits = apply_limit_overrides(info_.limits, plan_.limits);
  }

  Result<std::unique_ptr<MemoryRegion>> register_memory(void* addr, size_t length,
                                                        uint32_t access) override {
    return inner_->register_memory(addr, length, access);
  }

  Result<std::unique_ptr<Endpoint>> create_endpoint(const EndpointConfig& config) override {
    EndpointConfig changed = config;
    if (plan_.inline_override == InlineOverride::kForceOff && changed.max_inline != 0) {
      log_->push_back({"inline_off", "endpoint created with max_inline 0 instead of " +
                                         std::to_string(changed.max_inline)});
      changed.max_inline = 0;
    }
    if (!plan_.limits.empty() && !changed.raw) {
      if (Status fits = check_endpoint_config(changed, info_.limits); !fits.ok()) {
        Error error = std::move(fits).take_error();
        error.where.device = info_.name;
        return std::move(error).with_hint("the device limits come from " + plan_.limits_source +
                                          "; a device with these limits refuses this endpoint");
      }
    }
    auto endpoint = inner_->create_endpoint(changed);
    if (!endpoint.ok()) return endpoint;
    if (plan_.completions.empty() && plan_.posts.empty() &&
        plan_.inline_override == InlineOverride::kNone) {
      return endpoint;
    }
    return std::unique_ptr<Endpoint>(
        std::make_unique<FaultEndpoint>(std::move(endpoint).value(), plan_, log_, stale_));
  }

 private:
  std::unique_ptr<Device> inner_;
  FaultPlan plan_;
  std::shared_ptr<FaultLog> log_;
  std::shared_ptr<std::vector<Completion>> stale_ = std::make_shared<std::vector<Completion>>();
  DeviceInfo info_;
};

}  // namespace

std::unique_ptr<Device> wrap_device(std::unique_ptr<Device> device, FaultPlan plan,
                                    std::shared_ptr<FaultLog> log) {
  return std::make_unique<FaultDevice>(std::move(device), std::move(plan), std::move(log));
}

}  // namespace faultline::transports::fault
