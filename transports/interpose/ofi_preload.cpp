// The fallback for programs that set their own FI_PROVIDER_PATH (so libfabric never finds the
// hook provider): with libfaultline-fi.so in LD_PRELOAD, the program's fi_fabric comes here,
// runs libfabric's and wraps the fabric it opened, unless libfabric's hook already did.
#include <dlfcn.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <string>

#include "event_log.hpp"
#include "ofi_fabric.hpp"

namespace {

using FabricCall = int (*)(fi_fabric_attr*, fid_fabric**, void*);

FabricCall real_fi_fabric() {
  static const FabricCall real = [] {
    // libfabric's current fi_fabric, not the FABRIC_1.0 compatibility one.
    void* found = dlvsym(RTLD_NEXT, "fi_fabric", "FABRIC_1.1");
    if (found == nullptr) found = dlsym(RTLD_NEXT, "fi_fabric");
    return reinterpret_cast<FabricCall>(found);
  }();
  return real;
}

// "tcp;ofi_rxm" -> "ofi_rxm": the provider the program talks to is the last of the stack.
std::string outermost_provider(const fi_fabric_attr* attr) {
  if (attr == nullptr || attr->prov_name == nullptr) return "";
  const std::string stack = attr->prov_name;
  const size_t separator = stack.rfind(';');
  return separator == std::string::npos ? stack : stack.substr(separator + 1);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int fi_fabric(fi_fabric_attr* attr,
                                                                fid_fabric** fabric,
                                                                void* context) {
  const FabricCall real = real_fi_fabric();
  if (real == nullptr) return -FI_ENOSYS;
  const int opened = real(attr, fabric, context);
  if (opened == 0)
    faultline::transports::interpose::wrap_fabric(*fabric, outermost_provider(attr), "LD_PRELOAD");
  return opened;
}
