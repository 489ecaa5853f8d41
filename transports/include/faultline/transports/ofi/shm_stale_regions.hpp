#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace faultline::transports::ofi {

/// libfabric 1.17's shm provider names an endpoint's region "PID:DOMAIN:EP" in /dev/shm and
/// refuses (fi_enable: EBUSY) a name that exists while that pid is alive. A process killed
/// with SIGKILL leaves its regions behind, and when a later process is given the same pid,
/// its first shm endpoint fails. Before a process makes any shm region of its own, every
/// region carrying its pid is such a leftover: this removes them from `directory` and
/// returns their names.
std::vector<std::string> remove_stale_shm_regions(pid_t pid,
                                                  const std::string& directory = "/dev/shm");

/// The above for this process, once (at its first shm device).
void remove_own_stale_shm_regions_once();

}  // namespace faultline::transports::ofi
