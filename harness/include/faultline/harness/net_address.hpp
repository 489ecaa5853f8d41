#pragma once

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

/// A connected TCP socket descriptor to `address`, or the error of the last attempt.
Result<int> connect_tcp(const HostPort& address);

}  // namespace faultline::harness
