// A hang's hint names what the program waits on: a completion, an event channel, a
// connection, a lock, a child, from where its threads are.
#include "hang_waits.hpp"

#include <string_view>

namespace faultline::harness::sut {

std::string hang_waits_on(const std::string& stacks) {
  struct Wait {
    std::string_view frame;  // a function in a frame, or /proc's "system call NAME"
    std::string_view what;
  };
  // The most telling first: a wait of the RDMA stack says more than the futex beneath it.
  static constexpr Wait kWaits[] = {
      {"rdma_get_cm_event",
       "an rdma_cm event (rdma_get_cm_event): a connection set up or torn down"},
      {"rdma_get_request", "a connection request (rdma_get_request)"},
      {"rdma_get_send_comp", "a send completion (rdma_get_send_comp)"},
      {"rdma_get_recv_comp", "a receive completion (rdma_get_recv_comp)"},
      {"ibv_get_cq_event", "a completion event (ibv_get_cq_event on its completion channel)"},
      {"ibv_get_async_event", "an asynchronous device event (ibv_get_async_event)"},
      {"poll_cq_with_faults", "a completion (polling its CQ)"},
      {"fi_cq_sread", "a completion (fi_cq_sread)"},
      {"cq_sread", "a completion (fi_cq_sread)"},
      {"fi_eq_sread", "a libfabric event (fi_eq_sread)"},
      {"cq_read", "a completion (polling its libfabric CQ)"},
      {" accept", "a connection (accept)"},
      {"system call accept", "a connection (accept)"},
      {"sem_wait", "a semaphore (sem_wait)"},
      {"sem_timedwait", "a semaphore (sem_timedwait)"},
      {"pthread_cond_wait", "a condition variable (another thread's signal)"},
      {"pthread_cond_timedwait", "a condition variable (another thread's signal)"},
      {"pthread_join", "a thread to end (pthread_join)"},
      {"waitpid", "a child process (waitpid)"},
      {"system call wait4", "a child process (wait4)"},
      {"system call waitid", "a child process (waitid)"},
      {"system call futex", "a lock or condition variable (futex)"},
      {"epoll_wait", "a file descriptor (epoll)"},
      {"system call epoll_pwait", "a file descriptor (epoll)"},
      {"system call ppoll", "a file descriptor (poll)"},
      {"system call poll", "a file descriptor (poll)"},
      {"system call pselect6", "a file descriptor (select)"},
      {"system call read", "a read (a socket, a pipe or a device file)"},
      {"system call recvfrom", "a socket (recv)"},
      {"system call recvmsg", "a socket (recvmsg)"},
      {"nanosleep", "nothing: it sleeps, in a loop that never ends (a retry or a polled barrier)"},
  };
  for (const Wait& wait : kWaits)
    if (stacks.find(wait.frame) != std::string::npos) return std::string(wait.what);
  return "";
}

}  // namespace faultline::harness::sut
