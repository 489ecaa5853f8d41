#pragma once

#include <string>
#include <string_view>

namespace faultline::reports {

/// Text made safe for XML and HTML content and attribute values: & < > " ' escaped, and
/// control characters XML 1.0 cannot carry replaced by '?'.
inline std::string escape_markup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: {
        const auto byte = static_cast<unsigned char>(c);
        out += byte < 0x20 && c != '\n' && c != '\t' && c != '\r' ? '?' : c;
      }
    }
  }
  return out;
}

}  // namespace faultline::reports
