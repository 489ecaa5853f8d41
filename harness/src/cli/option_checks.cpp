#include "option_checks.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace faultline::cli {

CLI::Validator seconds_up_to(double most) {
  const std::string range = "seconds above 0 and at most " + std::to_string(std::lround(most));
  return CLI::Validator(
      [most, range](const std::string& text) -> std::string {
        double seconds = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, seconds);
        if (error != std::errc() || stop != end || !(seconds > 0 && seconds <= most))
          return "expected " + range + ", got '" + text + "'";
        return "";
      },
      range);
}

CLI::Validator whole_number() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || error != std::errc() || stop != end)
          return "expected a whole number from 0 to 18446744073709551615, got '" + text + "'";
        return "";
      },
      "0..2^64-1");
}

}  // namespace faultline::cli
