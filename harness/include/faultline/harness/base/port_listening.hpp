#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace faultline::harness {

/// Whether a TCP socket in the network namespace of process `pid` listens on `port`: a row
/// of /proc/PID/net/tcp or tcp6 in state LISTEN; or an rdma_cm listener (rping -s,
/// rdma_server) is bound to `port` on an RDMA device of this host. Nothing connects to it, so
/// a server that takes one connection only (rc_pingpong, ucx_perftest) is not disturbed.
bool port_listening(pid_t pid, uint16_t port);

/// Waits until `pid` listens on `port` (decimal text, as a {port} placeholder holds it), has
/// ended, or `until` has come. True when it listens; false at once for text that is no port.
bool wait_until_listening(pid_t pid, const std::string& port,
                          std::chrono::steady_clock::time_point until);

}  // namespace faultline::harness
