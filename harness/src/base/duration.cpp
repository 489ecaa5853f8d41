#include "faultline/harness/base/duration.hpp"

#include <cctype>
#include <cstdint>
#include <exception>

namespace faultline::harness {

std::optional<std::chrono::milliseconds> parse_duration(const std::string& text) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text.front())) != 0))
    return std::nullopt;
  double value = 0;
  size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = text.substr(used);
  const double scale = unit == "ms"                  ? 1
                       : unit == "s" || unit.empty() ? 1000
                       : unit == "m"                 ? 60000
                       : unit == "h"                 ? 3600000
                                                     : -1;
  if (scale < 0 || !(value > 0) || value * scale > 86400000.0 * 7) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(value * scale));
}

}  // namespace faultline::harness
