#include "ofi_common.hpp"

#include <rdma/fi_endpoint.h>

#include <cstring>

#include "faultline/transports/ofi/ofi_status_map.hpp"

namespace faultline::transports::ofi {

Error ofi_call_error(std::string call, ssize_t rc, const DeviceInfo* device, std::string message) {
  const int code = static_cast<int>(-rc);
  Error error;
  error.code = ErrorCode::kNativeError;
  error.call = std::move(call);
  error.native_code = rc;
  // libfabric reuses errno values below FI_ERRNO_OFFSET, and the errno's text is printed
  // with it; above the offset the codes are libfabric's own, and so is their text.
  error.native_name = ofi_error_name(code);
  if (code > 0 && code < FI_ERRNO_OFFSET) {
    error.sys_errno = code;
  } else {
    error.native_name += std::string(" (") + api::strerror(code) + ")";
  }
  error.message = std::move(message);
  if (device != nullptr) {
    error.where.transport = "ofi";
    error.where.provider = device->native_provider;
    error.where.device = device->name;
  }
  return error;
}

std::string short_provider_name(const char* prov_name) {
  std::string name = prov_name != nullptr ? prov_name : "";
  return name.substr(0, name.find(';'));
}

InfoPtr make_hints(const std::string& provider) {
  InfoPtr hints{api::dupinfo(nullptr)};
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps =
      FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_SEND | FI_RECV;
  hints->mode = FI_CONTEXT;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  if (!provider.empty()) {
    // fi_info frees prov_name with free(); give it a malloc'd copy.
    hints->fabric_attr->prov_name = strdup(provider.c_str());
  }
  return hints;
}

DeviceInfo device_info_from(const fi_info& info) {
  DeviceInfo device;
  device.transport = "ofi";
  device.provider = short_provider_name(info.fabric_attr->prov_name);
  device.native_provider = info.fabric_attr->prov_name;
  device.name = info.domain_attr->name != nullptr ? info.domain_attr->name : "";
  device.fabric = info.fabric_attr->name != nullptr ? info.fabric_attr->name : "";
  device.state = "active";

  DeviceLimits& limits = device.limits;
  limits.max_qp_wr = static_cast<uint32_t>(info.tx_attr->size);
  limits.max_recv_wr = static_cast<uint32_t>(info.rx_attr->size);
  limits.max_send_sge = static_cast<uint32_t>(info.tx_attr->iov_limit);
  limits.max_recv_sge = static_cast<uint32_t>(info.rx_attr->iov_limit);
  limits.max_sge_rd = static_cast<uint32_t>(info.tx_attr->rma_iov_limit);
  limits.max_inline_data = static_cast<uint32_t>(info.tx_attr->inject_size);
  limits.max_msg_size = info.ep_attr->max_msg_size;
  if (info.nic != nullptr && info.nic->link_attr != nullptr && info.nic->link_attr->mtu > 0) {
    limits.active_mtu = static_cast<uint32_t>(info.nic->link_attr->mtu);
  }

  Capabilities& caps = device.capabilities;
  caps.send_recv = (info.caps & FI_MSG) != 0;
  caps.rdma_write = (info.caps & FI_RMA) != 0 && (info.caps & FI_WRITE) != 0;
  caps.rdma_read = (info.caps & FI_RMA) != 0 && (info.caps & FI_READ) != 0;
  caps.send_with_imm = info.domain_attr->cq_data_size >= 4;
  caps.write_with_imm = caps.rdma_write && caps.send_with_imm;
  caps.inline_send = limits.max_inline_data > 0;
  caps.atomics = false;
  caps.write_imm_consumes_recv = (info.mode & FI_RX_CQ_DATA) != 0;
  caps.flushes_sends_on_error = false;
  return device;
}

}  // namespace faultline::transports::ofi
