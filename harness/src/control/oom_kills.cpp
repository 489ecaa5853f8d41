#include "oom_kills.hpp"

#include <fstream>
#include <sstream>

namespace faultline::harness {

namespace {

// The value of `key` in a file of "key value" lines (memory.events, memory.oom_control,
// /proc/vmstat).
std::optional<uint64_t> keyed_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string name;
  uint64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return std::nullopt;
}

// This process's cgroup file that counts OOM kills: the v2 hierarchy's memory.events (mounted
// at /sys/fs/cgroup, or at /sys/fs/cgroup/unified beside v1 controllers), else the v1 memory
// controller's memory.oom_control.
std::pair<std::string, std::optional<uint64_t>> cgroup_oom_kills() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  std::string v2_path;
  std::string v1_memory_path;
  while (std::getline(in, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) v2_path = path;
    std::stringstream list(controllers);
    for (std::string controller; std::getline(list, controller, ',');)
      if (controller == "memory") v1_memory_path = path;
  }
  if (!v1_memory_path.empty()) {
    const std::string file = "/sys/fs/cgroup/memory" + v1_memory_path + "/memory.oom_control";
    if (auto count = keyed_value(file, "oom_kill")) return {file, count};
  }
  for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    const std::string file = root + v2_path + "/memory.events";
    if (auto count = keyed_value(file, "oom_kill")) return {file, count};
  }
  return {"", std::nullopt};
}

}  // namespace

OomKillCounts read_oom_kill_counts() {
  auto [file, count] = cgroup_oom_kills();
  return {count, file, keyed_value("/proc/vmstat", "oom_kill")};
}

std::optional<std::string> oom_kill_between(const OomKillCounts& before,
                                            const OomKillCounts& after) {
  auto grew = [](const std::optional<uint64_t>& from, const std::optional<uint64_t>& to,
                 const std::string& where) -> std::optional<std::string> {
    if (!from || !to || *to <= *from) return std::nullopt;
    return "the kernel's OOM kill count in " + where + " went from " + std::to_string(*from) +
           " to " + std::to_string(*to) + " while the scenario ran";
  };
  if (before.cgroup_file == after.cgroup_file)
    if (auto said = grew(before.cgroup, after.cgroup, after.cgroup_file)) return said;
  return grew(before.machine, after.machine, "/proc/vmstat");
}

}  // namespace faultline::harness
