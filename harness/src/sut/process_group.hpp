#pragma once

// A program and every process it starts: run with extra environment in a session of its own,
// its output handed to an OutputReader as it arrives, ended at a deadline (after every
// process's stacks are taken with gdb, in parallel within a budget), and never left behind:
// the calling process
// becomes their subreaper (PR_SET_CHILD_SUBREAPER), so a launcher's ranks stay its descendants
// and are killed and reaped when the run ends.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "faultline/core/status.hpp"
#include "output_reader.hpp"

namespace faultline::harness::sut {

struct GroupRun {
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool timed_out = false;
  bool stopped = false;  ///< ended by request_stop() while still running
  double seconds = 0;
  std::string stacks;  ///< when timed out or stopped: every process's threads (gdb)
  /// The longest stretch (start and end included) without a post or completion, when the
  /// interposers counted any; `quiet`: stopped for one longer than ProgressWatch's limit.
  std::optional<int64_t> longest_quiet_ms;
  bool quiet = false;
};

/// The interposers' progress counter (FAULTLINE_PROGRESS: posts the provider took and
/// completions handed to the program), as a run watches it.
struct ProgressWatch {
  const uint64_t* counter = nullptr;
  std::chrono::milliseconds quiet_limit{0};  ///< still running this long without one: a hang
};

using Environment = std::vector<std::pair<std::string, std::string>>;

/// Runs `argv` with `environment` added, until it exits or `deadline` passes, its stdout and
/// stderr together into `output`. Whatever it started that is still alive at the end is
/// killed. A program that cannot be started exits 127 with the reason in its output. The
/// stacks of a program still running at its deadline or when stopped are taken with gdb; of a
/// `peer` stopped after the judged role ended, each thread's innermost frame from /proc. With a
/// `progress` counter, a program that went `quiet_limit` without a post or completion is ended
/// as at its deadline (it is checked at least once a second).
Result<GroupRun> run_process_group(const std::vector<std::string>& argv,
                                   const Environment& environment,
                                   std::chrono::milliseconds deadline, OutputReader& output,
                                   bool peer = false, const ProgressWatch& progress = {});

/// Wall-clock milliseconds now (CLOCK_REALTIME), as the interposers' log stamps its events.
int64_t wall_clock_ms();

}  // namespace faultline::harness::sut
