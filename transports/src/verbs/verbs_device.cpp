#include "verbs_device.hpp"

#include <fcntl.h>

#include <algorithm>

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

bool VerbsDevice::cq_overran(const ibv_cq* cq) {
  std::lock_guard lock(events_mutex_);
  if (!events_nonblocking_) {  // once: reading the events must never wait
    const int flags = fcntl(context_->async_fd, F_GETFL);
    if (flags >= 0) fcntl(context_->async_fd, F_SETFL, flags | O_NONBLOCK);
    events_nonblocking_ = true;
  }
  ibv_async_event event{};
  while (ibv_get_async_event(context_.get(), &event) == 0) {
    if (event.event_type == IBV_EVENT_CQ_ERR) overrun_cqs_.push_back(event.element.cq);
    ibv_ack_async_event(&event);
  }
  const auto found = std::find(overrun_cqs_.begin(), overrun_cqs_.end(), cq);
  if (found == overrun_cqs_.end()) return false;
  overrun_cqs_.erase(found);
  return true;
}

}  // namespace faultline::transports::verbs
