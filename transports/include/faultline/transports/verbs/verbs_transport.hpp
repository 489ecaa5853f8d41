#pragma once

#include <map>
#include <memory>
#include <string>

#include "faultline/transports/transport.hpp"

namespace faultline::transports::verbs {

/// The rdma-core transport: RC queue pairs on any verbs device (mlx5, bnxt_re, irdma, hns,
/// efa-less RoCE, rxe). A device is an RDMA device name ("rxe0", "mlx5_0"); the provider
/// column is the link layer ("roce" or "ib"). Default: the first device with an active port.
std::unique_ptr<Transport> make_verbs_transport();

/// The QP types a plain ibv_create_qp makes on `device` ("rxe0"): RC, UC and UD, true when
/// made, false when refused. What a device profile's qp_types holds, measured here; kNotFound
/// naming the devices present for one that is not.
Result<std::map<std::string, bool>> probe_qp_types(const std::string& device);

}  // namespace faultline::transports::verbs
