#pragma once

#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/transports/types.hpp"

namespace faultline::transports {

/// One field of an EndpointConfig above a device limit.
struct LimitViolation {
  std::string field;       ///< "send_depth"
  uint64_t requested = 0;  ///< 196609
  std::string limit_name;  ///< "max_qp_wr"
  uint64_t limit = 0;      ///< 65535
  std::string derivation;  ///< "3 x max_tokens_per_rank 65536 + 1", may be empty

  /// "send_depth 196609 (= 3 x max_tokens_per_rank 65536 + 1) exceeds device max_qp_wr 65535"
  std::string describe() const;
};

/// Every field of `config` above a limit of `limits`; empty when the config fits.
std::vector<LimitViolation> find_limit_violations(const EndpointConfig& config,
                                                  const DeviceLimits& limits);

/// kLimitExceeded naming every violation, or ok.
Status check_endpoint_config(const EndpointConfig& config, const DeviceLimits& limits);

/// What a post on one connected endpoint may use: what the endpoint was granted and what its
/// device allows. Both transports check every post against it before the native call, so a
/// work request the device would refuse fails the same way, with the same text, everywhere.
struct PostLimits {
  uint32_t max_send_sge = 0;   ///< granted segments per send or write
  uint32_t max_recv_sge = 0;   ///< granted segments per receive
  uint32_t max_sge_rd = 0;     ///< the device's segments per RDMA read
  size_t max_segments = 0;     ///< what the endpoint's own work-request arrays hold
  uint32_t max_inline = 0;     ///< usable inline bytes: granted, never above what was asked
  uint32_t asked_inline = 0;   ///< what the endpoint asked for (EndpointConfig::max_inline)
  uint32_t driver_inline = 0;  ///< what the driver reported granting (rxe grants its maximum)
  uint32_t device_inline = 0;  ///< the device's max_inline_data (ofi: inject_size)
  uint64_t max_msg_size = 0;   ///< the device's largest message; 0: not advertised
  bool immediate_data = true;  ///< the device carries immediate data
};

/// The first rule `request` breaks (opcode, immediate data, segments against max_send_sge or,
/// for an RDMA read, max_sge_rd; inline against the usable inline; size against
/// max_msg_size), or ok. The error has no location: the endpoint adds its own.
Status check_send(const WorkRequest& request, const PostLimits& limits);
/// Likewise for a receive: segments against max_recv_sge, size against max_msg_size.
Status check_recv(const RecvRequest& request, const PostLimits& limits);

}  // namespace faultline::transports
