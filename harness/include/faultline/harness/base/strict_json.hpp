#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::harness {

/// Where a JSON text is wrong and what was expected there, in the words of a load problem.
struct JsonTextProblem {
  std::string pointer;   ///< the JSON pointer of the offending key or value, when known
  std::string expected;  ///< "each key once in an object; \"id\" appears twice", ...
};

/// The JSON pointer (RFC 6901) of a path: "/" before each token, "~" and "/" in it escaped.
std::string json_pointer(const std::vector<std::string>& tokens);

/// Parses `text`, refusing what a plain parse takes silently, throws on without a place or
/// cannot hold: nesting deeper than kMaxJsonDepth (copying, comparing and printing recurse per
/// level), a key given twice in one object (the last would win), a number no double holds
/// (1e400), and syntax errors (with line and column). nullopt with `problem` set when it refuses.
std::optional<nlohmann::json> parse_json_strictly(std::string_view text, JsonTextProblem& problem);

/// How large an input file faultline reads may be, by default.
inline constexpr size_t kMaxInputFileBytes = size_t{64} << 20;

/// The bytes of an input file a user or a peer named: a regular file (a FIFO, a device such as
/// /dev/zero, a folder or a socket is refused before it is read, never waited on) of at most
/// `max_bytes`. Errors (kInvalidArgument) start with `path`.
Result<std::string> read_input_file(const std::string& path, size_t max_bytes = kMaxInputFileBytes);

/// The one JSON reader of input files: read_input_file, then parse_json_strictly. An error
/// (kInvalidArgument) reads "PATH: POINTER: expected WHAT".
Result<nlohmann::json> read_json_file(const std::string& path,
                                      size_t max_bytes = kMaxInputFileBytes);

/// The same for a document already in memory, `name` standing for its file.
Result<nlohmann::json> parse_json_text(const std::string& name, std::string_view text);

/// The string at `key` of `object`, or "" when it is absent or not a string (a peer's record).
std::string text_at(const nlohmann::json& object, const char* key);

}  // namespace faultline::harness
