#include "side_evidence.hpp"

#include "faultline/harness/base/net_address.hpp"

namespace faultline::harness {

MeteredSide::MeteredSide(std::unique_ptr<transports::Device> device,
                         transports::fault::FaultPlan plan)
    : seed_(plan.seed), traffic_(std::make_shared<transports::meter::TrafficCounts>()) {
  if (!plan.empty()) {
    faults_ = std::make_shared<transports::fault::FaultLog>();
    device = transports::fault::wrap_device(std::move(device), std::move(plan), faults_);
  }
  device_ = transports::meter::meter_device(std::move(device), traffic_);
  counters_before_ = transports::read_port_counters(device_->info().name, device_->info().port);
}

nlohmann::json MeteredSide::evidence() const {
  nlohmann::json applied = nlohmann::json::array();
  if (faults_) {
    for (const auto& fault : *faults_)
      applied.push_back({{"kind", fault.kind}, {"detail", fault.detail}});
  }
  // Both sides of a pair on one device see each other's traffic in its counters, so `host`
  // lets a reader count a port once.
  nlohmann::json port_counters = nullptr;
  if (counters_before_) {
    if (const auto after =
            transports::read_port_counters(counters_before_->device, counters_before_->port)) {
      port_counters = {{"host", host_name()},
                       {"device", counters_before_->device},
                       {"port", counters_before_->port},
                       {"grown", transports::grown_counters(*counters_before_, *after)}};
    }
  }
  return {{"faults", {{"seed", seed_}, {"applied", applied}}},
          {"traffic", traffic_->to_json()},
          {"port_counters", port_counters}};
}

}  // namespace faultline::harness
