#pragma once

#include <cstddef>
#include <string_view>

namespace faultline {

/// How deep a JSON document read from a peer or a file may nest. nlohmann::json parses
/// iteratively, but copying, comparing and dumping a document recurse once per level: a frame
/// of 1 MiB of '[' would overflow a thread's stack. Nothing faultline writes nests beyond 10.
inline constexpr size_t kMaxJsonDepth = 64;

/// The deepest nesting of arrays and objects in `text`, read as JSON text (brackets inside
/// strings do not count). Linear, no allocation; meant to run before the parse.
size_t json_nesting_depth(std::string_view text);

}  // namespace faultline
