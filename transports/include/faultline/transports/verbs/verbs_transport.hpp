#pragma once

#include <memory>

#include "faultline/transports/transport.hpp"

namespace faultline::transports::verbs {

/// The rdma-core transport: RC queue pairs on any verbs device (mlx5, bnxt_re, irdma, hns,
/// efa-less RoCE, rxe). A device is an RDMA device name ("rxe0", "mlx5_0"); the provider
/// column is the link layer ("roce" or "ib"). Default: the first device with an active port.
std::unique_ptr<Transport> make_verbs_transport();

}  // namespace faultline::transports::verbs
