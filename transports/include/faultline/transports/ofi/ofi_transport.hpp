#pragma once

#include <memory>

#include "faultline/transports/transport.hpp"

namespace faultline::transports::ofi {

/// The libfabric transport: FI_EP_RDM endpoints on any provider present ("tcp" = tcp;ofi_rxm,
/// "shm", "sockets" here; "verbs", "efa" on hardware). A device is a libfabric domain ("lo",
/// "eth0", "shm"); the default provider is tcp and its default device is "lo".
std::unique_ptr<Transport> make_ofi_transport();

}  // namespace faultline::transports::ofi
