#include "verbs_device.hpp"

#include "verbs_endpoint.hpp"

namespace faultline::transports::verbs {

Result<std::unique_ptr<MemoryRegion>> VerbsDevice::register_memory(void* addr, size_t length,
                                                                   uint32_t access) {
  int native_access = IBV_ACCESS_LOCAL_WRITE;
  if ((access & kAccessRemoteWrite) != 0) native_access |= IBV_ACCESS_REMOTE_WRITE;
  if ((access & kAccessRemoteRead) != 0) native_access |= IBV_ACCESS_REMOTE_READ;
  MrPtr mr{ibv_reg_mr(pd_.get(), addr, length, native_access)};
  if (!mr) {
    return verbs_call_error("ibv_reg_mr", errno, info_, std::nullopt,
                            "registering " + std::to_string(length) + " bytes")
        .with_hint(errno == ENOMEM || errno == EPERM
                       ? "pinned memory is limited by `ulimit -l` (RLIMIT_MEMLOCK); raise it"
                       : "");
  }
  return std::unique_ptr<MemoryRegion>(std::make_unique<VerbsMemoryRegion>(std::move(mr)));
}

Result<std::unique_ptr<Endpoint>> VerbsDevice::create_endpoint(const EndpointConfig& config) {
  auto endpoint = VerbsEndpoint::create(*this, config);
  if (!endpoint.ok()) return std::move(endpoint).take_error();
  return std::unique_ptr<Endpoint>(std::move(endpoint).value());
}

}  // namespace faultline::transports::verbs
