#include "faultline/harness/base/duration.hpp"

#include <cctype>
#include <charconv>
#include <cstdint>

namespace faultline::harness {

std::optional<std::chrono::milliseconds> parse_duration(const std::string& text) {
  // Decimal digits with at most one point, then a unit: no sign, hex ("0x10"), exponent,
  // "nan" or "inf", which a plain stod would take.
  const size_t number_end = text.find_first_not_of("0123456789.");
  const std::string number = text.substr(0, number_end);
  if (number.empty() || number.find('.') != number.rfind('.') ||
      std::isdigit(static_cast<unsigned char>(number.front())) == 0)
    return std::nullopt;
  double value = 0;
  const auto [stop, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (error != std::errc() || stop != number.data() + number.size()) return std::nullopt;
  const std::string unit = number_end == std::string::npos ? "" : text.substr(number_end);
  const double scale = unit == "ms"                  ? 1
                       : unit == "s" || unit.empty() ? 1000
                       : unit == "m"                 ? 60000
                       : unit == "h"                 ? 3600000
                                                     : -1;
  if (scale < 0 || !(value > 0) || value * scale > 86400000.0 * 7) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(value * scale));
}

}  // namespace faultline::harness
