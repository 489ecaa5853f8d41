#pragma once

#include <rdma/fi_domain.h>

#include "ofi_common.hpp"

namespace faultline::transports::ofi {

class OfiMemoryRegion final : public MemoryRegion {
 public:
  OfiMemoryRegion(FidPtr<fid_mr> mr, void* addr, size_t length, bool virtual_addressing)
      : mr_(std::move(mr)), addr_(addr), length_(length), virtual_addressing_(virtual_addressing) {}

  void* addr() const override { return addr_; }
  size_t length() const override { return length_; }
  RemoteBuffer remote(size_t offset, size_t length) const override {
    // Without FI_MR_VIRT_ADDR the target address is an offset into the region.
    const uint64_t base = virtual_addressing_ ? reinterpret_cast<uintptr_t>(addr_) : 0;
    return {base + offset, fi_mr_key(mr_.get()), length};
  }
  void* descriptor() const { return fi_mr_desc(mr_.get()); }

 private:
  FidPtr<fid_mr> mr_;
  void* addr_;
  size_t length_;
  bool virtual_addressing_;
};

}  // namespace faultline::transports::ofi
