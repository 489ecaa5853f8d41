#pragma once

#include <string>
#include <string_view>

#include "faultline/core/printable_text.hpp"

namespace faultline::reports {

/// Text made safe for XML and HTML content and attribute values: & < > " ' escaped, and what
/// XML 1.0 cannot carry (invalid UTF-8, control characters, U+FFFE, U+FFFF) replaced
/// (`printable`).
inline std::string escape_markup(std::string_view bytes) {
  const std::string text = printable(bytes);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace faultline::reports
