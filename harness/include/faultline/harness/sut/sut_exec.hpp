#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::harness::sut {

/// How a system under test reacted (docs: "Testing your own stack").
enum class SutVerdict {
  kPass,              ///< no fault planned: it exited 0 (and its output looked right)
  kFail,              ///< no fault planned: it failed
  kDetected,          ///< a fault fired and the program said so (an error line, a non-zero exit,
                      ///< or abort() after an error line)
  kSilentCorruption,  ///< it ran on with wrong output, or exited 0 with output the checker calls
                      ///< wrong
  kHang,              ///< it did not end within its deadline (every process's stacks captured)
  kCrashed,           ///< a signal ended it (an abort() with no error line before it too)
  kMasked,            ///< a fault fired, it exited 0 and a checker saw right output (a retry,
                      ///< a redundant path)
  kUndetected,        ///< a fault fired, it exited 0 saying nothing and no checker looked: nobody
                      ///< knows (a data fault: likely silent corruption)
  kNotReached,        ///< faults were planned, none fired and it exited 0: a filter matched
                      ///< nothing, or the program bypassed the interposers
};

/// How long taking the stacks of a hung program may take in all (gdb on every process, in
/// parallel; past it each thread's innermost frame comes from /proc): a hang costs its limit
/// and this, and a sweep's budget counts both.
constexpr std::chrono::seconds kHangStacksBudget{20};

/// Every verdict, in declaration order.
constexpr SutVerdict kAllSutVerdicts[] = {SutVerdict::kPass,      SutVerdict::kFail,
                                          SutVerdict::kDetected,  SutVerdict::kSilentCorruption,
                                          SutVerdict::kHang,      SutVerdict::kCrashed,
                                          SutVerdict::kMasked,    SutVerdict::kUndetected,
                                          SutVerdict::kNotReached};

std::string_view to_string(SutVerdict verdict);
/// Exit code of `faultline sut`: 0 for pass, detected and masked, 1 otherwise.
int exit_code_of(SutVerdict verdict);

/// Patterns (RE2 regular expressions) over each line of the program's output; empty: not
/// checked.
struct Checker {
  std::string ok;     ///< the output of a correct run
  std::string wrong;  ///< the output of a run with wrong data
  std::string error;  ///< the line a detected error prints
};

struct ExecOptions {
  std::vector<std::string> command;
  nlohmann::json plan = {{"faults", nlohmann::json::array()}};  ///< FAULTLINE_FAULTS
  std::chrono::milliseconds deadline{60000};
  Checker checker;
  std::string interpose_dir;  ///< where libfaultline-fi.so is
  std::string work_dir;       ///< the fault log and the output go here
  /// A peer of the judged role under `sut run`, stopped when the judged one ended: its stacks
  /// get a budget of 3 s, not 20 (gdb took 10 s a StepMesh peer in the Soft-RoCE guest).
  bool peer = false;
  /// Still running this long without a post or completion (the interposers count them under
  /// any plan with a fault in it): a hang before the deadline. 0: the deadline alone.
  std::chrono::milliseconds quiet_limit{0};
};

struct ExecResult {
  SutVerdict verdict = SutVerdict::kPass;
  std::optional<int> exit_code;  ///< when it exited
  std::optional<int> signal;     ///< when a signal ended it
  bool timed_out = false;
  bool stopped = false;  ///< still running when stopped (SIGTERM: `sut run` ends a waiting peer)
  double seconds = 0;
  std::vector<std::string> output;     ///< its first and last output lines (stdout and stderr)
  uint64_t output_dropped = 0;         ///< lines between those, in `output_log` only
  uint64_t output_cut = 0;             ///< lines cut short (in full in `output_log`)
  std::string output_log;              ///< every byte of the output
  std::vector<nlohmann::json> events;  ///< the interposers' log: instrumented, fault, ...
  size_t faults_applied = 0;
  /// Of those, a device's smaller answer to a create that succeeded (`limits` lowering a value):
  /// no operation changed, so a failure then is no fault's doing unless another fired.
  size_t limits_lowered = 0;
  std::string first_error_line;  ///< detected: the first line that said so
  std::optional<double> fault_to_error_ms;
  std::string stacks;  ///< hang: `gdb -batch` of every process
  /// The longest stretch without a post or completion; none when the interposers counted none.
  std::optional<int64_t> longest_quiet_ms;
  bool quiet = false;  ///< a hang found by quiet_limit, before the deadline
  std::string evidence;
  std::string hint;

  nlohmann::json to_json() const;
};

/// Where the interposers are: $FAULTLINE_INTERPOSE_DIR, else the installation's
/// (PREFIX/lib/faultline/interpose), else interpose/ beside this binary (a build tree).
std::string default_interpose_dir();

/// Whether the checker's patterns compile: an error naming the option and why, before anything
/// runs.
Status check_checker(const Checker& checker);

/// Runs `options.command` under the interposers with `options.plan`, until it ends or its
/// deadline passes, and judges it. Its output goes to WORK_DIR/output.log whole; the report
/// keeps its first and last lines.
Result<ExecResult> exec_under_faults(const ExecOptions& options);

/// The faults that acted so far in a run `exec_under_faults` is making in `work_dir` (its plan
/// and the interposers' log as written up to now): those judged, less a device's lowered
/// answers. `sut run` reads it while a role's program still runs.
size_t faults_acted_so_far(const std::string& work_dir);

}  // namespace faultline::harness::sut
