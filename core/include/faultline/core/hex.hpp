#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace faultline {

/// Lower-case hex of `bytes`: endpoint addresses on the control channel, nonces, digests.
std::string to_hex(std::span<const std::byte> bytes);
/// The bytes of lower-case hex text; an odd trailing digit or a non-hex digit is dropped.
std::vector<std::byte> from_hex(const std::string& text);

}  // namespace faultline
