#include "process_group.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "faultline/harness/base/process.hpp"
#include "faultline/harness/sut/sut_exec.hpp"
#include "faultline/transports/ofi/shm_stale_regions.hpp"
#include "proc_stacks.hpp"
#include "untimed_waits.hpp"

namespace faultline::harness::sut {

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void exec_child(const std::vector<std::string>& argv, const Environment& environment,
                             int output, pid_t parent) {
  // The program dies with faultline: one killed while it waits for a peer would spin on.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  // A session of its own: no signal it sends to its group, and no Ctrl-C or Ctrl-Z of the
  // terminal, reaches faultline's.
  setsid();
  dup2(output, STDOUT_FILENO);
  dup2(output, STDERR_FILENO);
  for (const auto& [name, value] : environment) setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  const std::string why =
      "faultline sut: cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
  (void)!write(STDOUT_FILENO, why.data(), why.size());
  _exit(127);
}

struct ProcessEntry {
  pid_t pid = 0;
  pid_t parent = 0;
  pid_t group = 0;
};

// Every live process, from /proc.
std::vector<ProcessEntry> live_processes() {
  std::vector<ProcessEntry> processes;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return processes;
  while (dirent* entry = readdir(proc)) {
    const pid_t pid = std::atoi(entry->d_name);
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(entry->d_name) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so read after its ')'.
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    std::string state;
    ProcessEntry process{pid, 0, 0};
    rest >> state >> process.parent >> process.group;
    if (state != "Z") processes.push_back(process);
  }
  closedir(proc);
  return processes;
}

// Every descendant of this process. faultline is their subreaper (PR_SET_CHILD_SUBREAPER), so
// a launcher's ranks stay its descendants even after the launcher is gone, and whatever
// process group they moved to.
std::vector<pid_t> descendants() {
  const auto processes = live_processes();
  std::vector<pid_t> found = {getpid()};
  for (size_t i = 0; i < found.size(); ++i) {
    for (const auto& process : processes) {
      if (process.parent == found[i] &&
          std::find(found.begin(), found.end(), process.pid) == found.end())
        found.push_back(process.pid);
    }
  }
  found.erase(found.begin());
  return found;
}

// Reaps what has ended of this process's children (orphans come to it), `pid` only when given.
// Before a pid is reaped, while no other process can have it, libfabric shm regions named by
// it (/dev/shm/PID:...) are removed: a killed program cannot, and a later process given that
// pid would fail its first shm endpoint (fi_enable: EBUSY).
// Returns whether `pid` (when given) was reaped.
bool reap(pid_t pid = -1, int* status = nullptr, bool wait = false) {
  for (;;) {
    siginfo_t ended{};
    const int options = WEXITED | WNOWAIT | (wait ? 0 : WNOHANG);
    if (waitid(pid == -1 ? P_ALL : P_PID, static_cast<id_t>(pid == -1 ? 0 : pid), &ended,
               options) != 0 ||
        ended.si_pid == 0)
      return false;
    (void)transports::ofi::remove_stale_shm_regions(ended.si_pid);
    waitpid(ended.si_pid, pid == ended.si_pid ? status : nullptr, 0);
    if (pid != -1) return true;
  }
}

// Whether any child is left to reap (ended or not).
bool has_children() {
  siginfo_t ended{};
  return waitid(P_ALL, 0, &ended, WEXITED | WNOHANG | WNOWAIT) == 0;
}

// Kills every descendant, and reaps them: none is left, nor their shm regions.
void kill_all() {
  for (int tries = 0; tries < 100; ++tries) {
    reap();
    const auto left = descendants();
    if (left.empty()) break;
    for (pid_t pid : left) kill(pid, SIGKILL);
    usleep(20000);
  }
  // Those that were still exiting when last looked at.
  for (int tries = 0; tries < 50 && has_children(); ++tries) {
    reap();
    usleep(10000);
  }
}

// A gdb taking one process's stacks, its output read as it comes.
struct StackTaker {
  pid_t pid = 0;
  FILE* gdb = nullptr;
  std::string stacks;
};

// Every thread's backtrace of every process the program started: gdb on up to
// kParallelStackTakers processes at once, all of them within `budget` (a process not reached by
// then is named, without its stacks).
std::string stacks_of_all(std::chrono::seconds budget) {
  constexpr size_t kParallelStackTakers = 8;
  const auto give_up = Clock::now() + budget;
  const std::vector<pid_t> pids = descendants();
  std::string stacks;
  for (size_t first = 0; first < pids.size(); first += kParallelStackTakers) {
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(give_up - Clock::now());
    std::vector<StackTaker> takers;
    for (size_t i = first; i < std::min(pids.size(), first + kParallelStackTakers); ++i) {
      StackTaker taker{pids[i]};
      if (left.count() > 0) {
        const std::string command = "timeout " + std::to_string(left.count()) +
                                    " gdb -batch -nx -p " + std::to_string(pids[i]) +
                                    " -ex 'thread apply all bt' 2>&1";
        taker.gdb = popen(command.c_str(), "r");
        if (taker.gdb == nullptr)
          taker.stacks = "gdb could not be started: " + std::string(std::strerror(errno)) + "\n";
      } else {
        taker.stacks =
            "not taken: the " + std::to_string(budget.count()) + " s budget for stacks was spent\n";
      }
      takers.push_back(std::move(taker));
    }
    for (auto& taker : takers) {  // each ends by its own timeout: reading them in turn is fine
      if (taker.gdb == nullptr) continue;
      char buffer[4096];
      for (size_t read = 0; (read = fread(buffer, 1, sizeof buffer, taker.gdb)) > 0;)
        taker.stacks.append(buffer, read);
      pclose(taker.gdb);
    }
    for (const auto& taker : takers) {
      stacks += "=== pid " + std::to_string(taker.pid) + "\n" + taker.stacks;
      // gdb ran out of time (a loaded host) or could not attach: where each thread is, at least.
      if (taker.stacks.find("\n#0 ") == std::string::npos &&
          taker.stacks.rfind("#0 ", 0) == std::string::npos)
        stacks += "(innermost frames from /proc, gdb gave none)\n" + proc_stacks(taker.pid);
    }
  }
  return stacks;
}

// Each thread's innermost frame of every process the program started, from /proc only.
std::string innermost_frames_of_all() {
  std::string stacks;
  for (const pid_t pid : descendants())
    stacks +=
        "=== pid " + std::to_string(pid) + " (innermost frames from /proc)\n" + proc_stacks(pid);
  return stacks;
}

// The quiet stretches of a run: when the counter last moved, and the longest stretch it stood.
class QuietStretches {
 public:
  QuietStretches(const ProgressWatch& watch, Clock::time_point started)
      : watch_(watch), last_change_(started) {}
  // Looks at the counter; true when the program has been quiet past the limit and every
  // thread of it sleeps with no timeout (one that polls, or waits on a timer of its own, may
  // yet move on: the deadline judges it).
  bool quiet_too_long(Clock::time_point now) {
    if (watch_.counter == nullptr) return false;
    const uint64_t count = __atomic_load_n(watch_.counter, __ATOMIC_RELAXED);
    if (count != last_count_) {
      longest_ = std::max(longest_, now - last_change_);
      last_count_ = count;
      last_change_ = now;
      moved_ = true;
    }
    return watch_.quiet_limit.count() > 0 && now - last_change_ >= watch_.quiet_limit &&
           every_thread_waits_without_timeout(descendants());
  }
  // The longest stretch, the last one (to `ended`) included; none when nothing was counted.
  std::optional<int64_t> longest_ms(Clock::time_point ended) const {
    if (!moved_) return std::nullopt;
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::max(longest_, ended - last_change_))
        .count();
  }

 private:
  const ProgressWatch& watch_;
  uint64_t last_count_ = 0;
  bool moved_ = false;
  Clock::time_point last_change_;
  Clock::duration longest_{0};
};

// Reads what is there on `fd` into `output`; false at EOF.
bool read_output(int fd, OutputReader& output) {
  char buffer[65536];
  const ssize_t read = ::read(fd, buffer, sizeof buffer);
  if (read <= 0) return read < 0 && errno == EINTR;
  output.feed(std::string_view(buffer, static_cast<size_t>(read)), wall_clock_ms());
  return true;
}

}  // namespace

int64_t wall_clock_ms() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

Result<GroupRun> run_process_group(const std::vector<std::string>& argv,
                                   const Environment& environment,
                                   std::chrono::milliseconds deadline, OutputReader& output,
                                   bool peer, const ProgressWatch& progress) {
  if (argv.empty()) return Error{ErrorCode::kInvalidArgument, "no command to run"};
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return errno_error("pipe2", errno, "for the output");
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const auto started = Clock::now();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return errno_error("fork", errno, "for " + argv[0]);
  if (pid == 0) exec_child(argv, environment, pipe_fds[1], parent);
  ::close(pipe_fds[1]);
  const int ended = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));  // readable once it ends
  GroupRun run;
  QuietStretches stretches(progress, started);
  int status = 0;
  bool exited = false;
  for (bool open = true; !exited;) {
    const auto now = Clock::now();
    const auto left =
        deadline - std::chrono::duration_cast<std::chrono::milliseconds>(now - started);
    const bool quiet = stretches.quiet_too_long(now);
    if (left.count() <= 0 || stop_requested() || quiet) {
      // One that ended as the deadline came is judged by how it ended: no hang without a
      // process left to show its stacks.
      exited = reap(pid, &status);
      if (exited) break;
      // A peer stopped after the judged role ended: where each of its threads waits, from
      // /proc at once (gdb over StepMesh's threads took 10 s a peer in the Soft-RoCE guest,
      // and a lane of SUT scenarios paid it at every one).
      run.stacks =
          stop_requested() && peer ? innermost_frames_of_all() : stacks_of_all(kHangStacksBudget);
      exited = run.stacks.empty() && reap(pid, &status, true);
      if (!exited) (stop_requested() ? run.stopped : run.timed_out) = true;
      run.quiet = quiet && run.timed_out;
      break;
    }
    // Asleep until output comes, the program ends, a signal or the deadline: no wake-up in
    // between takes a core from a program that is timing itself (ib_send_lat under `sut exec`
    // in the 2-vCPU guest). At most a second, for a stop asked just before the wait. Without a
    // pidfd (kernels before 5.3) it looks for the program's end every 100 ms.
    pollfd ready[2] = {{open ? pipe_fds[0] : -1, POLLIN, 0}, {ended, POLLIN, 0}};
    const int64_t wait_ms = ended >= 0 ? 1000 : 100;
    if (::poll(ready, 2, static_cast<int>(std::min<int64_t>(left.count(), wait_ms))) > 0 &&
        (ready[0].revents & (POLLIN | POLLHUP)) != 0)
      open = read_output(pipe_fds[0], output);
    exited = reap(pid, &status);
  }
  if (ended >= 0) ::close(ended);
  if (!exited) {
    kill(pid, SIGKILL);
    reap(pid, &status, true);
  }
  kill_all();  // the rest of what it started (a launcher's ranks): none outlives the run
  // What is left in the pipe; a process outside the group may still hold it open.
  fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
  while (read_output(pipe_fds[0], output)) {
  }
  output.finish(wall_clock_ms());
  ::close(pipe_fds[0]);
  const auto finished = Clock::now();
  run.seconds = std::chrono::duration<double>(finished - started).count();
  run.longest_quiet_ms = stretches.longest_ms(finished);
  const bool ended_by_us = run.timed_out || run.stopped;
  if (!ended_by_us && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (!ended_by_us && WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  return run;
}

}  // namespace faultline::harness::sut
