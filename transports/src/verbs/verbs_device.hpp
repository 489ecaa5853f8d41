#pragma once

#include <mutex>
#include <vector>

#include "verbs_common.hpp"

namespace faultline::transports::verbs {

/// An open verbs device: context, protection domain, one port and one GID.
class VerbsDevice final : public Device {
 public:
  VerbsDevice(ContextPtr context, PdPtr pd, DeviceInfo info)
      : context_(std::move(context)), pd_(std::move(pd)), info_(std::move(info)) {}

  const DeviceInfo& info() const override { return info_; }
  Result<std::unique_ptr<MemoryRegion>> register_memory(void* addr, size_t length,
                                                        uint32_t access) override;
  Result<std::unique_ptr<Endpoint>> create_endpoint(const EndpointConfig& config) override;

  ibv_context* context() const { return context_.get(); }
  ibv_pd* pd() const { return pd_.get(); }

  /// Whether the device raised IBV_EVENT_CQ_ERR (a CQ overrun) for `cq`: reads the device's
  /// asynchronous events without blocking, keeping those of other CQs for their endpoints.
  bool cq_overran(const ibv_cq* cq);

 private:
  ContextPtr context_;
  PdPtr pd_;
  DeviceInfo info_;
  std::mutex events_mutex_;
  std::vector<const ibv_cq*> overrun_cqs_;  ///< CQ_ERR events read, not yet claimed
  bool events_nonblocking_ = false;         ///< the async fd was set O_NONBLOCK
};

class VerbsMemoryRegion final : public MemoryRegion {
 public:
  explicit VerbsMemoryRegion(MrPtr mr) : mr_(std::move(mr)) {}
  void* addr() const override { return mr_->addr; }
  size_t length() const override { return mr_->length; }
  RemoteBuffer remote(size_t offset, size_t length) const override {
    return {reinterpret_cast<uintptr_t>(mr_->addr) + offset, mr_->rkey, length};
  }
  uint32_t lkey() const { return mr_->lkey; }

 private:
  MrPtr mr_;
};

}  // namespace faultline::transports::verbs
