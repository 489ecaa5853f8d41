#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace faultline::harness {

/// A duration as a person writes it on a command line or in a scenario file: "500ms", "60s",
/// "2m", "1h" or plain seconds ("90", "1.5"). nullopt when it is none of these, not above
/// zero, or longer than a week.
std::optional<std::chrono::milliseconds> parse_duration(const std::string& text);

}  // namespace faultline::harness
