#pragma once

#include <infiniband/verbs.h>

#include <memory>
#include <optional>
#include <string>

#include "faultline/core/status.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::transports::verbs {

struct ContextCloser {
  void operator()(ibv_context* context) const { ibv_close_device(context); }
};
struct PdDeleter {
  void operator()(ibv_pd* pd) const { ibv_dealloc_pd(pd); }
};
struct CqDeleter {
  void operator()(ibv_cq* cq) const { ibv_destroy_cq(cq); }
};
struct QpDeleter {
  void operator()(ibv_qp* qp) const { ibv_destroy_qp(qp); }
};
struct MrDeleter {
  void operator()(ibv_mr* mr) const { ibv_dereg_mr(mr); }
};
struct DeviceListDeleter {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};
using ContextPtr = std::unique_ptr<ibv_context, ContextCloser>;
using PdPtr = std::unique_ptr<ibv_pd, PdDeleter>;
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;
using QpPtr = std::unique_ptr<ibv_qp, QpDeleter>;
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;
using DeviceListPtr = std::unique_ptr<ibv_device*, DeviceListDeleter>;

/// The error of a failed verbs call; `err` is the errno (or the positive return of a post).
Error verbs_call_error(std::string call, int err, const DeviceInfo& device,
                       std::optional<uint32_t> qp = std::nullopt, std::string message = {});

uint32_t mtu_bytes(ibv_mtu mtu);
/// The largest ibv_mtu not above `bytes` (256 at least).
ibv_mtu mtu_from_bytes(uint32_t bytes);

std::string gid_to_string(const ibv_gid& gid);
/// False when `text` is not an IPv6-form GID.
bool gid_from_string(const std::string& text, ibv_gid& gid);

}  // namespace faultline::transports::verbs
