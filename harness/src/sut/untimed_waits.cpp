#include "untimed_waits.hpp"

#include <sys/syscall.h>

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace faultline::harness::sut {

namespace {

// The system calls that sleep with a timeout, and which argument (1-based) holds it: a pointer
// (0: none) or, for poll and epoll_wait, milliseconds (-1: none).
struct TimedCall {
  long number;
  int argument;
  bool milliseconds;
};

constexpr TimedCall kTimedCalls[] = {
    {SYS_futex, 4, false},           {SYS_poll, 3, true},
    {SYS_ppoll, 3, false},           {SYS_epoll_wait, 4, true},
    {SYS_epoll_pwait, 4, true},      {SYS_select, 5, false},
    {SYS_pselect6, 5, false},        {SYS_rt_sigtimedwait, 3, false},
    {SYS_io_getevents, 5, false},    {SYS_recvmmsg, 5, false},
    {SYS_mq_timedreceive, 5, false},
#ifdef SYS_epoll_pwait2
    {SYS_epoll_pwait2, 4, false},
#endif
};

}  // namespace

bool waits_without_timeout(char state, const std::string& syscall_line) {
  if (state != 'S' && state != 'D' && state != 'T' && state != 't') return false;  // running
  std::istringstream fields(syscall_line);
  std::string first;
  long number = -1;
  if (!(fields >> first) ||
      std::from_chars(first.data(), first.data() + first.size(), number).ec != std::errc() ||
      number < 0)
    return false;  // "running", or -1: blocked outside a system call
  if (number == SYS_nanosleep || number == SYS_clock_nanosleep) return false;
  std::vector<uint64_t> arguments;
  for (std::string hex; arguments.size() < 6 && fields >> hex;) {
    uint64_t value = 0;
    const char* digits = hex.data() + (hex.rfind("0x", 0) == 0 ? 2 : 0);
    if (std::from_chars(digits, hex.data() + hex.size(), value, 16).ec != std::errc()) break;
    arguments.push_back(value);
  }
  for (const TimedCall& call : kTimedCalls) {
    if (call.number != number || arguments.size() < static_cast<size_t>(call.argument)) continue;
    const uint64_t timeout = arguments[call.argument - 1];
    // A millisecond count is an int: -1 (any negative) waits for ever, 0 returns at once.
    if (call.milliseconds) return static_cast<int32_t>(timeout) < 0;
    return timeout == 0;
  }
  return true;  // read, accept, wait4, ...: on a file, a peer or a child, no timeout of its own
}

bool every_thread_waits_without_timeout(const std::vector<pid_t>& pids) {
  size_t threads = 0;
  for (const pid_t pid : pids) {
    std::error_code error;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
      std::ifstream stat(task.path() / "stat");
      std::ifstream syscall(task.path() / "syscall");
      std::string stat_line;
      std::string syscall_line;
      if (!std::getline(stat, stat_line) || !std::getline(syscall, syscall_line)) continue;
      const size_t after_name = stat_line.rfind(')');
      if (after_name == std::string::npos || after_name + 2 >= stat_line.size()) continue;
      const char state = stat_line[after_name + 2];
      if (state == 'Z' || state == 'X') continue;
      if (!waits_without_timeout(state, syscall_line)) return false;
      ++threads;
    }
  }
  return threads > 0;
}

}  // namespace faultline::harness::sut
