#pragma once

// A program's output as it arrives, in bounded memory: every byte goes to its log file; each
// line, made valid UTF-8, goes to a watcher whole up to `longest_watched_line` (the checker sees
// every line; of a longer one, its last `longest_watched_line` bytes, where a progress line
// ends with its result); cut at `longest_line`, the first `head_lines` and the last
// `tail_lines` are kept for the report, and how much was left out is counted.
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::harness::sut {

struct OutputLine {
  int64_t wall_ms = 0;  ///< when it arrived (CLOCK_REALTIME, ms)
  std::string text;
};

struct OutputLimits {
  size_t longest_line = size_t{16} * 1024;         ///< as the report keeps it
  size_t longest_watched_line = size_t{16} << 20;  ///< as the watcher sees it
  size_t head_lines = 500;
  size_t tail_lines = 500;
};

class OutputReader {
 public:
  using Watcher = std::function<void(const OutputLine&)>;

  /// `log_fd`: where every byte goes (-1: nowhere); not closed here.
  OutputReader(int log_fd, Watcher watcher, OutputLimits limits = {});

  /// Takes what was read, splitting off the lines it ends (only the new bytes are searched).
  void feed(std::string_view bytes, int64_t wall_ms);
  /// The last line, when the output did not end with a newline.
  void finish(int64_t wall_ms);

  /// The lines kept: the head, then the tail.
  std::vector<OutputLine> kept() const;
  /// Lines between the head and the tail, not kept (all went to the log and the watcher).
  uint64_t dropped_lines() const { return dropped_lines_; }
  /// Lines longer than `longest_line`, and the bytes cut from them.
  uint64_t cut_lines() const { return cut_lines_; }
  uint64_t cut_bytes() const { return cut_bytes_; }
  uint64_t bytes() const { return bytes_; }
  /// Why writing the log failed (errno text), or "".
  const std::string& log_error() const { return log_error_; }

 private:
  void end_line(int64_t wall_ms);
  void write_log(std::string_view bytes);

  int log_fd_;
  Watcher watcher_;
  OutputLimits limits_;
  std::string pending_;         ///< the current line, its last bytes once it grew too long
  std::string pending_head_;    ///< its first `longest_line` bytes
  uint64_t pending_bytes_ = 0;  ///< its length
  std::vector<OutputLine> head_;
  std::deque<OutputLine> tail_;
  uint64_t dropped_lines_ = 0;
  uint64_t cut_lines_ = 0;
  uint64_t cut_bytes_ = 0;
  uint64_t bytes_ = 0;
  std::string log_error_;
};

}  // namespace faultline::harness::sut
