#include "output_reader.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "faultline/core/printable_text.hpp"

namespace faultline::harness::sut {

OutputReader::OutputReader(int log_fd, Watcher watcher, OutputLimits limits)
    : log_fd_(log_fd), watcher_(std::move(watcher)), limits_(limits) {}

void OutputReader::write_log(std::string_view bytes) {
  while (log_fd_ >= 0 && !bytes.empty()) {
    const ssize_t written = ::write(log_fd_, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      log_error_ = std::strerror(errno);
      log_fd_ = -1;  // said once; the lines still reach the watcher and the report
      return;
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
}

void OutputReader::feed(std::string_view bytes, int64_t wall_ms) {
  bytes_ += bytes.size();
  write_log(bytes);
  while (!bytes.empty()) {
    const size_t end = bytes.find('\n');
    const std::string_view part = bytes.substr(0, end);
    const size_t room = limits_.longest_line - std::min(limits_.longest_line, pending_head_.size());
    pending_head_.append(part.substr(0, room));
    pending_bytes_ += part.size();
    pending_.append(part);
    // Past twice the bound, back to its last bytes: linear however long the line grows.
    if (pending_.size() > 2 * limits_.longest_watched_line)
      pending_.erase(0, pending_.size() - limits_.longest_watched_line);
    if (end == std::string_view::npos) return;
    end_line(wall_ms);
    bytes.remove_prefix(end + 1);
  }
}

void OutputReader::finish(int64_t wall_ms) {
  if (pending_bytes_ > 0) end_line(wall_ms);
}

void OutputReader::end_line(int64_t wall_ms) {
  if (watcher_) {
    const size_t watched = std::min(pending_.size(), limits_.longest_watched_line);
    watcher_(OutputLine{wall_ms,
                        valid_utf8(std::string_view(pending_).substr(pending_.size() - watched))});
  }
  OutputLine line{wall_ms, valid_utf8(pending_head_)};
  if (pending_bytes_ > pending_head_.size()) {
    const uint64_t cut = pending_bytes_ - pending_head_.size();
    line.text += " [... " + std::to_string(cut) + " bytes cut: the log has the line]";
    ++cut_lines_;
    cut_bytes_ += cut;
  }
  pending_.clear();
  pending_head_.clear();
  pending_bytes_ = 0;
  if (head_.size() < limits_.head_lines) {
    head_.push_back(std::move(line));
    return;
  }
  tail_.push_back(std::move(line));
  if (tail_.size() > limits_.tail_lines) {
    tail_.pop_front();
    ++dropped_lines_;
  }
}

std::vector<OutputLine> OutputReader::kept() const {
  std::vector<OutputLine> lines = head_;
  lines.insert(lines.end(), tail_.begin(), tail_.end());
  return lines;
}

}  // namespace faultline::harness::sut
