#include "option_checks.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <iostream>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/base/labels.hpp"

namespace faultline::cli {

int usage_error(const std::string& command, const std::string& text) {
  std::cerr << "faultline " << command << ": " << text << "\n";
  return harness::kExitUsage;
}

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

CLI::Validator http_host_port() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        const std::string scheme = "http://";
        std::string rest = text.rfind(scheme, 0) == 0 ? text.substr(scheme.size()) : "";
        while (!rest.empty() && rest.back() == '/') rest.pop_back();
        const size_t colon = rest.rfind(':');
        unsigned port = 0;
        const char* end = rest.data() + rest.size();
        const bool port_ok = colon != std::string::npos && colon > 0 &&
                             std::from_chars(rest.data() + colon + 1, end, port).ptr == end &&
                             port >= 1 && port <= 65535 && colon + 1 < rest.size();
        if (!port_ok) return "expected http://HOST:PORT, got '" + text + "'";
        return "";
      },
      "http://HOST:PORT");
}

CLI::Validator agent_label() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (harness::is_agent_label(text)) return "";
        return "'" + text + "': expected 1 to 64 of A-Z a-z 0-9 . _ : @ + -";
      },
      "LABEL");
}

}  // namespace faultline::cli
