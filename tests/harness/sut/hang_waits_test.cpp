// A hang's hint names what the program waits on, from its stacks.
#include "sut/hang_waits.hpp"

#include <catch2/catch.hpp>

using faultline::harness::sut::hang_waits_on;

TEST_CASE("a hang names what its threads wait on, the RDMA stack's wait before the futex beneath",
          "[unit]") {
  const std::string rping =
      "Thread 2 (Thread 0x7f (LWP 12)):\n#0  0x7f in __GI___futex_abstimed_wait64 ()\n"
      "Thread 1 (Thread 0x7e (LWP 11)):\n#0  0x7f in read () from libc.so.6\n"
      "#1  0x7f in ibv_get_cq_event () from libibverbs.so.1\n#2  0x55 in cq_thread ()\n";
  CHECK_THAT(hang_waits_on(rping), Catch::Contains("completion event (ibv_get_cq_event"));
  CHECK_THAT(hang_waits_on("#0  0x7f in rdma_get_cm_event () from librdmacm.so.1\n"),
             Catch::Contains("rdma_cm event"));
  // /proc's innermost frames, gdb having given none.
  CHECK_THAT(hang_waits_on("Thread 7 (LWP 7) \"server\":\n#0  libc.so.6+0x8f1b2 (in system call "
                           "futex)\n"),
             Catch::Contains("futex"));
  CHECK(hang_waits_on("#0  0x55 in main ()\n").empty());
}
