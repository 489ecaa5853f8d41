#pragma once

#include <string>

namespace faultline::harness {

/// The one progress line a run keeps redrawn on a terminal, and the rule that keeps stderr
/// readable beside it: a line written to stderr first clears the live line, then the live line
/// comes back below it (under tmux or screen an uncleared line and a log line run together).

/// Draws `text` as the live line on stdout (a terminal), replacing the one shown.
void show_live_line(const std::string& text);
/// Clears the live line, if one is shown, so the next write to stdout starts a clean line.
void clear_live_line();
/// Writes `line` and a newline to stderr around the live line: cleared, written, redrawn.
void write_error_line(const std::string& line);

}  // namespace faultline::harness
