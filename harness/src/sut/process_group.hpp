#pragma once

// A program and every process it starts: run with extra environment in a process group of its
// own, its output read line by line with the time each line arrived, ended at a deadline (after
// every process's stacks are taken with gdb), and never left behind: the calling process
// becomes their subreaper (PR_SET_CHILD_SUBREAPER), so a launcher's ranks stay its descendants
// and are killed and reaped when the run ends.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::harness::sut {

struct OutputLine {
  int64_t wall_ms = 0;  ///< when it arrived (CLOCK_REALTIME, ms)
  std::string text;
};

struct GroupRun {
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool timed_out = false;
  bool stopped = false;  ///< ended by request_stop() while still running
  double seconds = 0;
  std::vector<OutputLine> lines;  ///< stdout and stderr together
  std::string stacks;             ///< when timed out or stopped: every process's threads (gdb)
};

using Environment = std::vector<std::pair<std::string, std::string>>;

/// Runs `argv` with `environment` added, until it exits or `deadline` passes. Whatever it
/// started that is still alive at the end is killed. A program that cannot be started exits 127
/// with the reason in its output.
Result<GroupRun> run_process_group(const std::vector<std::string>& argv,
                                   const Environment& environment,
                                   std::chrono::milliseconds deadline);

/// Wall-clock milliseconds now (CLOCK_REALTIME), as the interposers' log stamps its events.
int64_t wall_clock_ms();

}  // namespace faultline::harness::sut
