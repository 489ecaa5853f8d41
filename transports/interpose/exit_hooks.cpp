#include "exit_hooks.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace faultline::transports::interpose {

namespace {

std::mutex hooks_mutex;
std::vector<void (*)()>* hooks = nullptr;  // never destroyed: run at the very end
pid_t owner = 0;
std::atomic<bool> ran{false};

void run_exit_hooks() {
  if (getpid() != owner || ran.exchange(true)) return;
  std::vector<void (*)()> to_run;
  {
    std::lock_guard lock(hooks_mutex);
    if (hooks != nullptr) to_run = *hooks;
  }
  for (auto* hook : to_run) hook();
}

// The hooks, then the process ends as libc's _exit ends it (exit_group). Not through the next
// definition: a lookup by RTLD_NEXT goes through the verbs library's dlsym.
[[noreturn]] void leave(int status) {
  run_exit_hooks();
  for (;;) syscall(SYS_exit_group, status);
}

}  // namespace

void at_process_exit(void (*hook)()) { faultline_interpose_at_exit(hook); }

}  // namespace faultline::transports::interpose

// Exported: with both interposers preloaded, each one's registrations reach the first one's
// (the dynamic linker binds the name once), whose _exit runs them all.
extern "C" __attribute__((visibility("default"))) void faultline_interpose_at_exit(void (*hook)()) {
  using namespace faultline::transports::interpose;
  std::lock_guard lock(hooks_mutex);
  if (hooks == nullptr) {
    hooks = new std::vector<void (*)()>();
    owner = getpid();
    std::atexit(run_exit_hooks);
  }
  hooks->push_back(hook);
}

// NOLINTBEGIN(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp): libc's names, wrapped
// As unistd.h declares it (no exception specification), and _Exit as stdlib.h does.
extern "C" __attribute__((visibility("default"))) void _exit(int status) {
  faultline::transports::interpose::leave(status);
}
extern "C" __attribute__((visibility("default"))) void _Exit(int status) noexcept {
  faultline::transports::interpose::leave(status);
}
// NOLINTEND(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
