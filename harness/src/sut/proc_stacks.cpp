// The innermost frame of every thread of a process, from /proc/PID/task/*/syscall and maps.
#include "proc_stacks.hpp"

#include <dirent.h>

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
    stacks +=
        "#0  " + place(mappings, pc) +
        (words[0] == "-1" ? std::string(" (blocked)") : " (in system call " + words[0] + ")") +
        "\n";
  }
  closedir(tasks);
  return stacks;
}

}  // namespace faultline::harness::sut
