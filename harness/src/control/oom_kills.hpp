#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace faultline::harness {

/// How many processes the kernel's out-of-memory killer has killed so far: in this process's
/// memory cgroup (cgroup v2 `memory.events`, v1 `memory.oom_control`: the limit a container or
/// a Slurm job sets) and in the whole machine (`/proc/vmstat`). Each is absent where the
/// kernel does not say.
struct OomKillCounts {
  std::optional<uint64_t> cgroup;
  std::string cgroup_file;  ///< where `cgroup` was read
  std::optional<uint64_t> machine;
};

OomKillCounts read_oom_kill_counts();

/// For a child killed by SIGKILL between the two readings: which counter grew and by how much
/// ("the kernel's OOM kill count in /sys/fs/cgroup/.../memory.events went from 0 to 1 ..."), or
/// nothing when none did (so the kill came from someone else).
std::optional<std::string> oom_kill_between(const OomKillCounts& before,
                                            const OomKillCounts& after);

}  // namespace faultline::harness
