// The innermost frame of every thread of a process, from /proc/PID/task/*/syscall and maps.
#include "proc_stacks.hpp"

#include <dirent.h>
#include <sys/syscall.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace faultline::harness::sut {

namespace {

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;
  std::string object;
};

std::vector<Mapping> mappings_of(const std::string& proc) {
  std::vector<Mapping> mappings;
  std::ifstream maps(proc + "/maps");
  for (std::string line; std::getline(maps, line);) {
    Mapping mapping;
    char path[4096] = "";
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %4095s",
                    &mapping.start, &mapping.end, &mapping.offset, path) < 3)
      continue;
    const std::string object = path;
    mapping.object = object.substr(object.rfind('/') + 1);
    if (!mapping.object.empty()) mappings.push_back(mapping);
  }
  return mappings;
}

// "libc.so.6+0x8f1b2", or the address alone outside any file.
std::string place(const std::vector<Mapping>& mappings, uint64_t pc) {
  char text[64];
  for (const auto& mapping : mappings) {
    if (pc < mapping.start || pc >= mapping.end) continue;
    std::snprintf(text, sizeof text, "+0x%" PRIx64, pc - mapping.start + mapping.offset);
    return mapping.object + text;
  }
  std::snprintf(text, sizeof text, "0x%" PRIx64, pc);
  return text;
}

// The name of the system calls a blocked thread waits in, by this architecture's numbers; the
// number itself for one not listed.
std::string system_call_name(const std::string& number) {
  static constexpr std::pair<long, const char*> kNames[] = {
#define FAULTLINE_SYSCALL(name) {SYS_##name, #name},
      FAULTLINE_SYSCALL(read) FAULTLINE_SYSCALL(write) FAULTLINE_SYSCALL(readv) FAULTLINE_SYSCALL(
          ioctl) FAULTLINE_SYSCALL(futex) FAULTLINE_SYSCALL(ppoll) FAULTLINE_SYSCALL(pselect6)
          FAULTLINE_SYSCALL(epoll_pwait) FAULTLINE_SYSCALL(nanosleep)
              FAULTLINE_SYSCALL(clock_nanosleep) FAULTLINE_SYSCALL(wait4) FAULTLINE_SYSCALL(waitid)
                  FAULTLINE_SYSCALL(accept4) FAULTLINE_SYSCALL(connect) FAULTLINE_SYSCALL(recvfrom)
                      FAULTLINE_SYSCALL(recvmsg) FAULTLINE_SYSCALL(sendto)
                          FAULTLINE_SYSCALL(sendmsg) FAULTLINE_SYSCALL(rt_sigtimedwait)
                              FAULTLINE_SYSCALL(io_getevents) FAULTLINE_SYSCALL(sched_yield)
                                  FAULTLINE_SYSCALL(semtimedop)
#ifdef SYS_poll  // the calls newer architectures (aarch64) have only the p- or 4-forms of
                                      FAULTLINE_SYSCALL(poll) FAULTLINE_SYSCALL(select)
                                          FAULTLINE_SYSCALL(epoll_wait) FAULTLINE_SYSCALL(pause)
                                              FAULTLINE_SYSCALL(accept)
#endif
#undef FAULTLINE_SYSCALL
  };
  char* end = nullptr;
  const long value = std::strtol(number.c_str(), &end, 10);
  if (end == number.c_str() || *end != '\0') return number;
  for (const auto& [known, name] : kNames)
    if (known == value) return name;
  return number;
}

std::string first_line(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

}  // namespace

std::string proc_stacks(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  const std::vector<Mapping> mappings = mappings_of(proc);
  DIR* tasks = opendir((proc + "/task").c_str());
  if (tasks == nullptr) return "";
  std::string stacks;
  while (dirent* entry = readdir(tasks)) {
    const std::string tid = entry->d_name;
    if (tid.empty() || tid[0] == '.') continue;
    const std::string task = proc + "/task/" + tid;
    // "NR a1..a6 SP PC" in a system call, "-1 SP PC" blocked outside one, "running".
    std::istringstream fields(first_line(task + "/syscall"));
    std::vector<std::string> words;
    for (std::string word; fields >> word;) words.push_back(word);
    stacks += "Thread " + tid + " (LWP " + tid + ") \"" + first_line(task + "/comm") + "\":\n";
    if (words.size() < 3) {
      stacks += "#0  " + (words.empty() ? std::string("unknown") : words[0]) + "\n";
      continue;
    }
    const uint64_t pc = std::strtoull(words.back().c_str(), nullptr, 16);
    stacks += "#0  " + place(mappings, pc) +
              (words[0] == "-1" ? std::string(" (blocked)")
                                : " (in system call " + system_call_name(words[0]) + ")") +
              "\n";
  }
  closedir(tasks);
  return stacks;
}

}  // namespace faultline::harness::sut
