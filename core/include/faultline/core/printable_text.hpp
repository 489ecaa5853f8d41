#pragma once

#include <string>
#include <string_view>

namespace faultline {

/// `bytes` as valid UTF-8: each byte of an invalid, overlong, surrogate or truncated sequence
/// replaced by U+FFFD. A program's output and a peer's strings are bytes; JSON, XML and a
/// terminal need text.
std::string valid_utf8(std::string_view bytes);

/// `bytes` as text safe to print on a terminal or in a report: valid UTF-8 (valid_utf8), control
/// characters (C0 but newline and tab, DEL, C1) and the noncharacters U+FFFE and U+FFFF replaced
/// by '?', so no escape sequence reaches a terminal and no character XML 1.0 forbids remains.
std::string printable(std::string_view bytes);

}  // namespace faultline
