#pragma once

#include <string>
#include <vector>

#include "faultline/transports/status.hpp"
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

}  // namespace faultline::transports
