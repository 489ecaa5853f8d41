#include "faultline/core/printable_text.hpp"

#include <cstdint>

namespace faultline {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence at `at` (1 to 4), or 0 when none starts there, with
// its code point.
size_t sequence_at(std::string_view bytes, size_t at, uint32_t& code_point) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(bytes[at + i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  }
  size_t length = 0;
  uint32_t minimum = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, minimum = 0x80, code_point = lead & 0x1Fu;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, minimum = 0x800, code_point = lead & 0x0Fu;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, minimum = 0x10000, code_point = lead & 0x07u;
  } else {
    return 0;
  }
  if (at + length > bytes.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i) & 0x3Fu);
  }
  const bool surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
  return code_point < minimum || code_point > 0x10FFFF || surrogate ? 0 : length;
}

bool is_control(uint32_t code_point) {
  return (code_point < 0x20 && code_point != '\n' && code_point != '\t') ||
         (code_point >= 0x7F && code_point <= 0x9F) || code_point == 0xFFFE || code_point == 0xFFFF;
}

// "\xNN" of a byte, "\uNNNN" of a code point.
std::string escaped(const char* prefix, uint32_t value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) text += kHex[(value >> shift) & 0xF];
  return text;
}

// A control character as a reader sees it: ESC as "\e", CR as "\r", other C0 and DEL as
// "\xNN", C1 and the two noncharacters as "\uNNNN".
std::string shown(uint32_t code_point) {
  if (code_point == 0x1B) return "\\e";
  if (code_point == '\r') return "\\r";
  if (code_point <= 0x7F) return escaped("\\x", code_point, 2);
  return escaped("\\u", code_point, 4);
}

// `bytes` with each valid sequence kept or rewritten by `keep_or_show` (empty: kept), and each
// byte of no valid sequence as `invalid` gives it.
template <typename Show, typename Invalid>
std::string rewrite(std::string_view bytes, Show keep_or_show, Invalid invalid) {
  std::string text;
  text.reserve(bytes.size());
  for (size_t at = 0; at < bytes.size();) {
    uint32_t code_point = 0;
    const size_t length = sequence_at(bytes, at, code_point);
    if (length == 0) {
      text += invalid(static_cast<uint8_t>(bytes[at]));
      ++at;
      continue;
    }
    const std::string instead = keep_or_show(code_point);
    if (instead.empty()) {
      text.append(bytes.substr(at, length));
    } else {
      text += instead;
    }
    at += length;
  }
  return text;
}

std::string kept(uint32_t /*code_point*/) { return ""; }
std::string replaced(uint8_t /*byte*/) { return std::string(kReplacement); }

}  // namespace

std::string valid_utf8(std::string_view bytes) { return rewrite(bytes, kept, replaced); }

std::string printable(std::string_view bytes) {
  return rewrite(
      bytes, [](uint32_t code_point) { return is_control(code_point) ? shown(code_point) : ""; },
      replaced);
}

std::string escape_invalid_utf8(std::string_view bytes) {
  return rewrite(bytes, kept, [](uint8_t byte) { return escaped("\\x", byte, 2); });
}

}  // namespace faultline
