#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace faultline::transports::interpose {

/// One frame of the program's call stack outside this library: a function the call went
/// through, or a call the compiler inlined into the frame after it.
struct CallerFrame {
  std::string object;    ///< the file it was loaded from
  std::string function;  ///< demangled; empty when nothing names it (function_names.hpp)
  size_t offset = 0;     ///< into the object, for addr2line
  bool inlined = false;

  /// "OBJECT(FUNCTION)+0xOFFSET", "OBJECT(FUNCTION) inlined", or "OBJECT+0xOFFSET".
  std::string text() const;
  /// What a rebuild keeps: the object's file name and the function, the offset only where
  /// nothing names the function.
  std::string identity() const;
};

/// backtrace(3), glibc's own: a sanitizer's runtime in the program intercepts it, and its frame
/// would be the program's first.
int libc_backtrace(void** frames, int size);

/// Where in the program the current call came from: up to 8 frames outside this library,
/// innermost first, inlined calls counted as frames.
std::vector<CallerFrame> caller_frames();

/// caller_frames() as text, one string each.
nlohmann::json caller_stack();

}  // namespace faultline::transports::interpose
