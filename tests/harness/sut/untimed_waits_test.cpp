// A program is stuck for good only when every thread sleeps on something with no timeout, as
// /proc says: a busy poll or a program's own timer may yet move it on.
#include "sut/untimed_waits.hpp"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

using faultline::harness::sut::every_thread_waits_without_timeout;
using faultline::harness::sut::waits_without_timeout;

namespace {

// A /proc syscall line: the number, then six arguments, the stack pointer and the pc in hex.
std::string in_call(long number, const std::string& arguments) {
  return std::to_string(number) + " " + arguments + " 0x7ffd 0x7f12";
}

}  // namespace

TEST_CASE("a thread asleep in a call with no timeout waits for good, one with a timeout not",
          "[unit]") {
  // futex wait: its 4th argument the timeout (a pointer, 0: none).
  CHECK(waits_without_timeout('S', in_call(SYS_futex, "0x55a0 0x80 0x0 0x0 0x0 0x0")));
  CHECK_FALSE(waits_without_timeout('S', in_call(SYS_futex, "0x55a0 0x80 0x0 0x7ffd10 0x0 0x0")));
  // poll and epoll_wait in milliseconds, -1: for ever.
  CHECK(waits_without_timeout('S', in_call(SYS_poll, "0x7ffd 0x2 0xffffffff 0x0 0x0 0x0")));
  CHECK_FALSE(waits_without_timeout('S', in_call(SYS_poll, "0x7ffd 0x2 0x64 0x0 0x0 0x0")));
  CHECK(waits_without_timeout('S', in_call(SYS_epoll_wait, "0x3 0x7ffd 0x8 0xffffffff 0x0 0x0")));
  CHECK_FALSE(waits_without_timeout('S', in_call(SYS_epoll_wait, "0x3 0x7ffd 0x8 0x3e8 0x0 0x0")));
  // A sleep always ends; a read (ibv_get_cq_event, rdma_get_cm_event) never by itself.
  CHECK_FALSE(
      waits_without_timeout('S', in_call(SYS_clock_nanosleep, "0x0 0x0 0x7ffd 0x0 0x0 0x0")));
  CHECK(waits_without_timeout('S', in_call(SYS_read, "0x5 0x7ffd 0x20 0x0 0x0 0x0")));
  // Running, or blocked outside a call: it may move on.
  CHECK_FALSE(waits_without_timeout('R', "running"));
  CHECK_FALSE(waits_without_timeout('S', "running"));
  CHECK_FALSE(waits_without_timeout('R', in_call(SYS_read, "0x5 0x7ffd 0x20 0x0 0x0 0x0")));
  CHECK_FALSE(waits_without_timeout('D', "-1 0x7ffd 0x7f12"));
  CHECK_FALSE(waits_without_timeout('S', "garbage"));
}

TEST_CASE("a process whose every thread waits with no timeout is told from one that sleeps",
          "[unit]") {
  // A child blocked reading a pipe nobody writes, then one sleeping 30 s.
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t reader = fork();
  if (reader == 0) {
    char byte;
    (void)!read(pipe_fds[0], &byte, 1);
    _exit(0);
  }
  const pid_t sleeper = fork();
  if (sleeper == 0) {
    sleep(30);
    _exit(0);
  }
  // Until each is asleep in its call (a fork's first instants are its own).
  bool reader_waits = false;
  for (int i = 0; i < 200 && !reader_waits; ++i) {
    reader_waits = every_thread_waits_without_timeout({reader});
    if (!reader_waits) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(reader_waits);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(every_thread_waits_without_timeout({sleeper}));
  CHECK_FALSE(every_thread_waits_without_timeout({reader, sleeper}));
  CHECK_FALSE(every_thread_waits_without_timeout({}));
  kill(reader, SIGKILL);
  kill(sleeper, SIGKILL);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  waitpid(reader, nullptr, 0);
  waitpid(sleeper, nullptr, 0);
}
