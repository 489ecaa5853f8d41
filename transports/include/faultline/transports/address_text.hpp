#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace faultline::transports {

/// An endpoint's address (`Endpoint::address()`) as a person reads it: "169.254.0.2:41234" for
/// the socket providers' IPv4 and IPv6 addresses, "qpn 17 gid fe80::..." for verbs, else
/// "a 24-byte address" (shm's names, other providers' formats).
std::string address_text(std::span<const std::byte> address);

/// The IP address in `address_text`'s text ("169.254.0.2" of "169.254.0.2:41234", the GID of
/// a verbs address), or "" when it has none.
std::string address_host(std::span<const std::byte> address);

}  // namespace faultline::transports
