#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <memory>
#include <string>

#include "faultline/core/status.hpp"
#include "faultline/transports/transport.hpp"
#include "libfabric_api.hpp"

namespace faultline::transports::ofi {

inline constexpr uint32_t kOfiApiVersion = FI_VERSION(1, 9);

/// Closes any libfabric object through its fid.
template <typename T>
struct FidCloser {
  void operator()(T* object) const {
    if (object != nullptr) fi_close(&object->fid);
  }
};
template <typename T>
using FidPtr = std::unique_ptr<T, FidCloser<T>>;

struct InfoDeleter {
  void operator()(fi_info* info) const { api::freeinfo(info); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

/// The error of a failed libfabric call (`rc` is its negative return value).
Error ofi_call_error(std::string call, ssize_t rc, const DeviceInfo* device,
                     std::string message = {});

/// The provider name users type: "tcp" for "tcp;ofi_rxm", "shm" for "shm".
std::string short_provider_name(const char* prov_name);

/// Hints for the endpoints faultline uses: FI_EP_RDM, messages and RMA, remote CQ data,
/// FI_CONTEXT, and every mr_mode bit faultline honours. `provider` may be empty.
InfoPtr make_hints(const std::string& provider);

/// DeviceLimits and Capabilities as advertised by one fi_info.
DeviceInfo device_info_from(const fi_info& info);

}  // namespace faultline::transports::ofi
