#include "ofi_device.hpp"

#include "ofi_endpoint.hpp"
#include "ofi_memory_region.hpp"

namespace faultline::transports::ofi {

OfiDevice::OfiDevice(InfoPtr info, DeviceInfo device_info)
    : info_(std::move(info)), device_info_(std::move(device_info)) {}

Result<std::unique_ptr<OfiDevice>> OfiDevice::open(InfoPtr info) {
  DeviceInfo device_info = device_info_from(*info);
  std::unique_ptr<OfiDevice> device(new OfiDevice(std::move(info), std::move(device_info)));
  fid_fabric* fabric = nullptr;
  if (int rc = api::fabric(device->info_->fabric_attr, &fabric, nullptr); rc != 0) {
    return ofi_call_error("fi_fabric", rc, &device->device_info_);
  }
  device->fabric_.reset(fabric);
  fid_domain* domain = nullptr;
  if (int rc = fi_domain(fabric, device->info_.get(), &domain, nullptr); rc != 0) {
    return ofi_call_error("fi_domain", rc, &device->device_info_);
  }
  device->domain_.reset(domain);
  return device;
}

Result<std::unique_ptr<MemoryRegion>> OfiDevice::register_memory(void* addr, size_t length,
                                                                 uint32_t access) {
  uint64_t ofi_access = FI_SEND | FI_RECV | FI_READ | FI_WRITE;
  if ((access & kAccessRemoteWrite) != 0) ofi_access |= FI_REMOTE_WRITE;
  if ((access & kAccessRemoteRead) != 0) ofi_access |= FI_REMOTE_READ;
  const bool bind_to_endpoint = (mr_mode() & FI_MR_ENDPOINT) != 0;
  if (bind_to_endpoint && bound_endpoint_ == nullptr) {
    return Error{ErrorCode::kInvalidArgument,
                 "provider " + device_info_.native_provider +
                     " requires FI_MR_ENDPOINT: create the endpoint before registering memory"};
  }
  fid_mr* mr = nullptr;
  const uint64_t requested_key = next_requested_key_++;
  if (int rc =
          fi_mr_reg(domain_.get(), addr, length, ofi_access, 0, requested_key, 0, &mr, nullptr);
      rc != 0) {
    return ofi_call_error("fi_mr_reg", rc, &device_info_,
                          "registering " + std::to_string(length) + " bytes");
  }
  FidPtr<fid_mr> owned(mr);
  if (bind_to_endpoint) {
    if (int rc = fi_mr_bind(mr, &bound_endpoint_->native()->fid, 0); rc != 0) {
      return ofi_call_error("fi_mr_bind", rc, &device_info_);
    }
    if (int rc = fi_mr_enable(mr); rc != 0)
      return ofi_call_error("fi_mr_enable", rc, &device_info_);
  }
  return std::unique_ptr<MemoryRegion>(std::make_unique<OfiMemoryRegion>(
      std::move(owned), addr, length, (mr_mode() & FI_MR_VIRT_ADDR) != 0));
}

Result<std::unique_ptr<Endpoint>> OfiDevice::create_endpoint(const EndpointConfig& config) {
  const bool one_endpoint_only = (mr_mode() & FI_MR_ENDPOINT) != 0;
  if (one_endpoint_only && bound_endpoint_ != nullptr) {
    return Error{ErrorCode::kUnsupported,
                 "provider " + device_info_.native_provider +
                     " uses FI_MR_ENDPOINT; faultline binds every region of a device to its one "
                     "endpoint: open another device for another endpoint"};
  }
  auto endpoint = OfiEndpoint::create(*this, config);
  if (!endpoint.ok()) return std::move(endpoint).take_error();
  if (one_endpoint_only) bound_endpoint_ = endpoint.value().get();
  return std::unique_ptr<Endpoint>(std::move(endpoint).value());
}

void OfiDevice::endpoint_closed(const OfiEndpoint* endpoint) {
  if (bound_endpoint_ == endpoint) bound_endpoint_ = nullptr;
}

}  // namespace faultline::transports::ofi
