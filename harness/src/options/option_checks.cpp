#include "option_checks.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <vector>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/base/labels.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/pushgateway.hpp"

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

CLI::Validator count_between(uint64_t least, uint64_t most) {
  const std::string range =
      "a whole number from " + std::to_string(least) + " to " + std::to_string(most);
  return CLI::Validator(
      [least, most, range](const std::string& text) -> std::string {
        uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || error != std::errc() || stop != end || value < least || value > most)
          return "expected " + range + ", got '" + text + "'";
        return "";
      },
      std::to_string(least) + ".." + std::to_string(most));
}

CLI::Validator number_between(double least, double most) {
  std::ostringstream range;
  range << "a number from " << least << " to " << most;
  return CLI::Validator(
      [least, most, range = range.str()](const std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || error != std::errc() || stop != end ||
            !(value >= least && value <= most))
          return "expected " + range + ", got '" + text + "'";
        return "";
      },
      "NUMBER");
}

CLI::Validator pushgateway_url() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        auto base = reports::pushgateway_base(text);
        return base.ok() ? "" : base.error().message;
      },
      "http://HOST[:PORT][/PATH]");
}

CLI::Validator report_dir() {
  return CLI::Validator(
      [](const std::string& dir) -> std::string {
        // Made as a trial and taken away again: a command line refused later (a bad scenario
        // file) leaves nothing behind, and the run makes it for real. Only the folders made
        // here go, deepest first and each only while empty: another process (a sweep's other
        // point) may be making and filling the same parent at the same time.
        std::vector<std::filesystem::path> made;
        for (std::filesystem::path at = std::filesystem::absolute(dir);
             !at.empty() && !std::filesystem::exists(at); at = at.parent_path()) {
          made.push_back(at);
          if (at == at.parent_path()) break;
        }
        std::error_code error;
        std::filesystem::create_directories(dir, error);
        std::string problem;
        if (error)
          problem = "cannot create " + dir + ": " + error.message();
        else if (!std::filesystem::is_directory(dir))
          problem = dir + " is not a directory";
        else if (::access(dir.c_str(), W_OK | X_OK) != 0)
          problem = "cannot write in " + dir + ": " + std::strerror(errno);
        std::error_code not_empty;
        for (const auto& folder : made)
          if (!std::filesystem::remove(folder, not_empty)) break;
        return problem;
      },
      "DIR");
}

CLI::Validator user_file() {
  return CLI::Validator([](const std::string& path) { return reports::user_file_problem(path); },
                        "FILE");
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
