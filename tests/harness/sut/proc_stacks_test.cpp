// The stacks of a process gdb could not take: each thread's innermost frame from /proc, the
// system call it waits in named.
#include "sut/proc_stacks.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

TEST_CASE("a thread blocked in a system call is named with the call, not a number", "[unit]") {
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string stacks;
  // Until the child has become sleep and sits in its sleep.
  for (int tries = 0; tries < 100; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stacks = faultline::harness::sut::proc_stacks(child);
    if (stacks.find("nanosleep") != std::string::npos) break;
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  INFO(stacks);
  CHECK_THAT(stacks, Catch::Contains("Thread ") && Catch::Contains("\"sleep\"") &&
                         Catch::Contains("(in system call clock_nanosleep)"));
}
