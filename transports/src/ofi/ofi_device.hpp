#pragma once

#include <rdma/fi_domain.h>

#include <cstdint>
#include <memory>

#include "ofi_common.hpp"

namespace faultline::transports::ofi {

class OfiEndpoint;

/// A libfabric fabric + domain for one fi_info entry.
class OfiDevice final : public Device {
 public:
  /// Opens fabric and domain for `info` (one entry, owned from here on).
  static Result<std::unique_ptr<OfiDevice>> open(InfoPtr info);

  const DeviceInfo& info() const override { return device_info_; }
  Result<std::unique_ptr<MemoryRegion>> register_memory(void* addr, size_t length,
                                                        uint32_t access) override;
  Result<std::unique_ptr<Endpoint>> create_endpoint(const EndpointConfig& config) override;

  const fi_info& fabric_info() const { return *info_; }
  fid_domain* domain() const { return domain_.get(); }
  uint64_t mr_mode() const { return info_->domain_attr->mr_mode; }
  /// Called by an endpoint on destruction (FI_MR_ENDPOINT bookkeeping).
  void endpoint_closed(const OfiEndpoint* endpoint);

 private:
  OfiDevice(InfoPtr info, DeviceInfo device_info);

  InfoPtr info_;
  DeviceInfo device_info_;
  FidPtr<fid_fabric> fabric_;
  FidPtr<fid_domain> domain_;
  uint64_t next_requested_key_ = 1;
  /// With FI_MR_ENDPOINT every MR binds to one endpoint: the device's only endpoint.
  OfiEndpoint* bound_endpoint_ = nullptr;
};

}  // namespace faultline::transports::ofi
