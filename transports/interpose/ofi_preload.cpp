// The fallback for programs that set their own FI_PROVIDER_PATH (so libfabric never finds the
// hook provider): with libfaultline-fi.so in LD_PRELOAD, the program's fi_fabric comes here,
// runs libfabric's and wraps the fabric it opened, unless libfabric's hook already did.
#include <dlfcn.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <string>

#include "event_log.hpp"
#include "ofi_fabric.hpp"
#include "ofi_limits.hpp"
#include "ofi_provider_call.hpp"

namespace {

using FabricCall = int (*)(fi_fabric_attr*, fid_fabric**, void*);
using GetinfoCall = int (*)(uint32_t, const char*, const char*, uint64_t, const fi_info*,
                            fi_info**);

// libfabric's current definition of `name` (its `version`, not a compatibility one), after
// this library's.
template <typename Call>
Call next_libfabric(const char* name, const char* version) {
  void* found = dlvsym(RTLD_NEXT, name, version);
  if (found == nullptr) found = dlsym(RTLD_NEXT, name);
  return reinterpret_cast<Call>(found);
}

GetinfoCall real_fi_getinfo() {
  static const auto real = next_libfabric<GetinfoCall>("fi_getinfo", "FABRIC_1.3");
  return real;
}

FabricCall real_fi_fabric() {
  static const auto real = next_libfabric<FabricCall>("fi_fabric", "FABRIC_1.1");
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

// The program's fi_getinfo under a `limits` fault: hints above a cap match nothing, and what it
// is told is no larger than the caps. A utility provider's own fi_getinfo for its core (inside
// the program's call) is passed through.
extern "C" __attribute__((visibility("default"))) int fi_getinfo(uint32_t version, const char* node,
                                                                 const char* service,
                                                                 uint64_t flags,
                                                                 const fi_info* hints,
                                                                 fi_info** info) {
  using namespace faultline::transports::interpose;  // NOLINT(google-build-using-namespace)
  const GetinfoCall real = real_fi_getinfo();
  if (real == nullptr) return -FI_ENOSYS;
  const ProviderCall inside;
  if (!ProviderCall::from_program()) return real(version, node, service, flags, hints, info);
  if (const int refused = refuse_hints(hints); refused != 0) return refused;
  const int found = real(version, node, service, flags, hints, info);
  if (found == 0 && info != nullptr) cap_infos(*info);
  return found;
}
