#pragma once

#include <string>
#include <string_view>

namespace faultline {

/// `bytes` as valid UTF-8: each byte of an invalid, overlong, surrogate or truncated sequence
/// replaced by U+FFFD. A program's output and a peer's strings are bytes; JSON, XML and a
/// terminal need text.
std::string valid_utf8(std::string_view bytes);

/// `bytes` as text safe to print on a terminal or in a report: valid UTF-8 (valid_utf8), control
/// characters (C0 but newline and tab, DEL, C1) and the noncharacters U+FFFE and U+FFFF shown
/// as what they were (ESC as `\e`, CR as `\r`, BEL as `\x07`, CSI as `\u009b`), so no escape
/// sequence reaches a terminal and no character XML 1.0 forbids remains. The one sanitizer
/// every string from a program, a peer or a file passes before a terminal, summary.md, HTML
/// or JUnit.
std::string printable(std::string_view bytes);

/// `bytes` as valid UTF-8 that keeps what it held: each byte of no valid sequence as `\xNN`
/// (a program path or argument that is not UTF-8, in a JSON report).
std::string escape_invalid_utf8(std::string_view bytes);

}  // namespace faultline
