#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "faultline/core/status.hpp"

namespace faultline::harness {

struct HostPort {
  std::string host;
  uint16_t port = 0;
  std::string text() const { return host + ":" + std::to_string(port); }
};

/// Parses "HOST:PORT" ("127.0.0.1:7300", "head:7300", "[::1]:7300"); a usage error names
/// what was expected.
Result<HostPort> parse_host_port(const std::string& text);

/// This machine's host name, as gethostname(2) gives it.
std::string host_name();

/// The local address of a connected socket ("169.254.0.2"), or "" when it has none.
std::string local_address(int fd);

/// The network interface that holds `address` ("eth0" for "169.254.0.2"), or "" when none
/// does.
std::string interface_with_address(const std::string& address);

/// Whether `text` is an address a program may be given to reach a host: an IPv4 or IPv6
/// literal, or a host name of RFC 1123 labels (letters, digits and inner '-', dot-separated, at
/// most 253 characters). Nothing a shell or an option parser would read as more: no spaces,
/// quotes, ';', '$', a leading '-' or '{'.
bool is_host_address(const std::string& text);

/// Whether `address` is a loopback address (127.0.0.0/8, ::1).
bool is_loopback_address(const std::string& address);

/// Listens on every address at `port` and returns the first connection accepted within
/// `wait` (close-on-exec); the listening socket is closed again.
Result<int> accept_one_tcp(uint16_t port, std::chrono::milliseconds wait);

/// A connected TCP socket descriptor to `address`, or the error of the last attempt.
Result<int> connect_tcp(const HostPort& address);

/// A TCP port on this machine nothing listens on now (a program's out-of-band exchange).
std::string free_local_port();

}  // namespace faultline::harness
