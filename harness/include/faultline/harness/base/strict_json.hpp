#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::harness {

/// Where a JSON text is wrong and what was expected there, in the words of a load problem.
struct JsonTextProblem {
  std::string pointer;   ///< the JSON pointer of the offending key or value, when known
  std::string expected;  ///< "each key once in an object; \"id\" appears twice", ...
};

/// The JSON pointer (RFC 6901) of a path: "/" before each token, "~" and "/" in it escaped.
std::string json_pointer(const std::vector<std::string>& tokens);

/// Parses `text`, refusing what a plain parse takes silently or throws on without a place: a key
/// given twice in one object (the last would win), a number no double holds (1e400), and
/// syntax errors (with line and column). nullopt with `problem` set when it refuses.
std::optional<nlohmann::json> parse_json_strictly(std::string_view text, JsonTextProblem& problem);

/// The string at `key` of `object`, or "" when it is absent or not a string (a peer's record).
std::string text_at(const nlohmann::json& object, const char* key);

}  // namespace faultline::harness
