#include "faultline/harness/sut/sut_exec.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "faultline/harness/base/install_paths.hpp"
#include "faultline/harness/base/process.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "output_checker.hpp"
#include "process_group.hpp"

namespace faultline::harness::sut {

namespace {

using nlohmann::json;

std::vector<json> read_events(const std::string& path) {
  std::vector<json> events;
  std::ifstream log(path);
  for (std::string line; std::getline(log, line);) {
    json event = json::parse(line, nullptr, false);
    if (!event.is_discarded()) events.push_back(std::move(event));
  }
  return events;
}

std::string signal_name(int signal) {
  const char* name = sigabbrev_np(signal);
  return name != nullptr ? std::string("SIG") + name : "signal " + std::to_string(signal);
}

// The first line after the first fault that says an error was seen.
void find_first_error(ExecResult& result, const OutputChecker& checker) {
  int64_t fault_ms = 0;
  for (const auto& event : result.events)
    if (event.value("event", "") == "fault") {
      fault_ms = event.value("time_ms", int64_t{0});
      break;
    }
  const auto line = checker.first_error_since(fault_ms);
  if (!line) return;
  result.first_error_line = line->text;
  if (fault_ms != 0) result.fault_to_error_ms = static_cast<double>(line->wall_ms - fault_ms);
}

// What the faults that fired did, from the interposers' `fault` events.
struct FiredFaults {
  size_t all = 0;
  size_t data = 0;        ///< changed the bytes the program read
  size_t shown_only = 0;  ///< `limits` showing a smaller device: a query answered, nothing refused
  bool only_shown() const { return all > 0 && shown_only == all; }
};

FiredFaults fired_faults(const std::vector<json>& events) {
  FiredFaults fired;
  for (const auto& event : events) {
    if (event.value("event", "") != "fault") continue;
    ++fired.all;
    // A data fault that changed no byte (a write with immediate's receive) changed nothing read.
    const bool data_kind = event.contains("data") || event.value("kind", "") == "corrupt_data";
    fired.data += data_kind && event.value("bytes_changed", uint64_t{1}) > 0;
    fired.shown_only += event.value("kind", "") == "limits" && event.contains("lowered");
  }
  return fired;
}

// The signal that ended the program: its own, or one a shell or launcher reports for a process
// it started as 128 + the signal (`sh -c`, mpirun: "exited on signal 11"), for the signals of
// a crash or an abort.
std::optional<int> ending_signal(const GroupRun& run) {
  if (run.signal) return run.signal;
  if (!run.exit_code) return std::nullopt;
  const int reported = *run.exit_code - 128;
  for (const int crash : {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE})
    if (reported == crash) return crash;
  return std::nullopt;
}

void judge_hang(ExecResult& result, const GroupRun& run, const ExecOptions& options) {
  result.verdict = SutVerdict::kHang;
  if (run.stopped) {
    result.evidence =
        "still running when it was stopped (its peer had ended, or faultline was interrupted); "
        "the stacks of every process are in `stacks`";
    result.hint =
        "a peer that waits forever once the other side fails: it never learns of the "
        "failure (no timeout, no error propagation)";
    return;
  }
  result.evidence = "still running after " + std::to_string(options.deadline.count()) +
                    " ms; the stacks of every process are in `stacks`";
  result.hint = result.faults_applied > 0
                    ? "the program waits for a completion that failed: a peer or a poll loop "
                      "that never learns of the error"
                    : "it hangs without a fault: check the command on its own first";
}

std::string exit_text(const GroupRun& run, const std::string& error_line) {
  return "exit code " + std::to_string(run.exit_code.value_or(-1)) +
         (error_line.empty() ? "" : "; " + error_line);
}

// Planned faults, none fired: the program failed by itself, or a filter missed.
void judge_unfired(ExecResult& result, const GroupRun& run, const OutputChecker& checker) {
  const bool ok = !checker.has_ok_pattern() || checker.ok_seen();
  if (run.exit_code == 0 && ok && !checker.wrong_seen()) {
    result.verdict = SutVerdict::kNotReached;
    result.evidence = "no planned fault fired";
    result.hint =
        "a filter matched nothing (layer, side, rank, nth beyond the completions there were), "
        "or the program bypassed the interposers (static linking, its own provider path, "
        "direct verbs); the `instrumented` events say what was reached";
    return;
  }
  result.verdict = SutVerdict::kFail;
  const auto line = checker.first_error_since(0);
  result.evidence = "no planned fault fired and it failed by itself: " +
                    exit_text(run, line ? line->text : "") +
                    (ok ? "" : "; the output lacks the checker's ok pattern");
  result.hint = "run the command without faults first: it must pass before a fault means anything";
}

// A fault fired and the program exited 0 saying nothing: masked only if a checker saw it right.
void judge_quiet_exit(ExecResult& result, const FiredFaults& fired, const OutputChecker& checker) {
  if (fired.only_shown() && (!checker.has_ok_pattern() || checker.ok_seen())) {
    result.verdict = SutVerdict::kPass;
    result.evidence =
        "runs within these limits: it was shown the smaller device and asked for nothing above "
        "its caps";
  } else if (checker.has_ok_pattern()) {
    result.verdict = checker.ok_seen() ? SutVerdict::kMasked : SutVerdict::kSilentCorruption;
    result.evidence = checker.ok_seen()
                          ? "the fault fired and the program still exited 0 with the right output"
                          : "the fault fired, the program exited 0, its output lacks the ok "
                            "pattern";
  } else {
    result.verdict = SutVerdict::kUndetected;
    result.evidence =
        fired.data > 0
            ? "the fault changed data the program read (" + std::to_string(fired.data) +
                  " time(s)) and it exited 0 without an error: likely silent corruption, and "
                  "nothing checked its output"
            : "the fault fired and the program exited 0 without an error; nothing checked its "
              "output, so whether it masked the fault is unknown";
    result.hint = "give --ok a pattern of a correct run's output (and --wrong one of a wrong "
                  "run's) so the run can be judged masked or silent corruption";
  }
}

void judge(ExecResult& result, const GroupRun& run, const ExecOptions& options,
           const OutputChecker& checker) {
  // `observe` changes nothing: a run under it alone is judged as one without faults.
  const json faults = options.plan.value("faults", json::array());
  const bool faults_planned = std::any_of(faults.begin(), faults.end(), [](const json& fault) {
    return !fault.is_object() || fault.value("kind", std::string()) != "observe";
  });
  const FiredFaults fired = fired_faults(result.events);
  find_first_error(result, checker);
  if (run.stopped || run.timed_out) {
    judge_hang(result, run, options);
  } else if (ending_signal(run) == SIGABRT && fired.all > 0 && !result.first_error_line.empty()) {
    // abort() after printing the error (Gloo's and UCX's fatal errors, assertions): a
    // deliberate stop.
    result.verdict = SutVerdict::kDetected;
    result.evidence = "aborted (SIGABRT) after reporting: " + result.first_error_line;
  } else if (const auto signal = ending_signal(run)) {
    result.verdict = SutVerdict::kCrashed;
    result.evidence = "killed by " + signal_name(*signal) +
                      (run.signal ? "" : " (exit code " + std::to_string(*run.exit_code) +
                                             ": a process it started, as its shell or launcher "
                                             "reports it)");
  } else if (faults_planned && fired.all == 0) {
    judge_unfired(result, run, checker);
  } else if (checker.wrong_seen()) {
    result.verdict = SutVerdict::kSilentCorruption;
    result.evidence = "the output matches the checker's wrong-data pattern";
  } else if (!faults_planned) {
    const bool ok = !checker.has_ok_pattern() || checker.ok_seen();
    result.verdict = run.exit_code == 0 && ok ? SutVerdict::kPass : SutVerdict::kFail;
    if (result.verdict == SutVerdict::kFail)
      result.evidence = exit_text(run, "") + (ok ? "" : "; the output lacks the checker's ok pattern");
  } else if (run.exit_code != 0 || !result.first_error_line.empty()) {
    result.verdict = SutVerdict::kDetected;
    result.evidence = exit_text(run, result.first_error_line);
  } else {
    judge_quiet_exit(result, fired, checker);
  }
}

}  // namespace

std::string_view to_string(SutVerdict verdict) {
  switch (verdict) {
    case SutVerdict::kPass: return "pass";
    case SutVerdict::kFail: return "fail";
    case SutVerdict::kDetected: return "detected";
    case SutVerdict::kSilentCorruption: return "silent-corruption";
    case SutVerdict::kHang: return "hang";
    case SutVerdict::kCrashed: return "crashed";
    case SutVerdict::kMasked: return "masked";
    case SutVerdict::kUndetected: return "undetected";
    case SutVerdict::kNotReached: return "not-reached";
  }
  return "fail";
}

int exit_code_of(SutVerdict verdict) {
  const bool good = verdict == SutVerdict::kPass || verdict == SutVerdict::kDetected ||
                    verdict == SutVerdict::kMasked;
  return good ? 0 : 1;
}

std::string default_interpose_dir() {
  if (const char* dir = std::getenv("FAULTLINE_INTERPOSE_DIR"); dir != nullptr && *dir != '\0')
    return dir;
  if (std::string installed = installed_interpose_dir(); !installed.empty()) return installed;
  return std::filesystem::path(own_executable()).parent_path().string() + "/interpose";
}

json ExecResult::to_json() const {
  json lines = json::array();
  for (const auto& line : output) lines.push_back(line);
  return {{"verdict", sut::to_string(verdict)},
          {"exit_code", exit_code ? json(*exit_code) : json(nullptr)},
          {"signal", signal ? json(*signal) : json(nullptr)},
          {"timed_out", timed_out},
          {"stopped", stopped},
          {"seconds", seconds},
          {"faults_applied", faults_applied},
          {"first_error_line", first_error_line},
          {"fault_to_error_ms", fault_to_error_ms ? json(*fault_to_error_ms) : json(nullptr)},
          {"evidence", evidence},
          {"hint", hint},
          {"stacks", stacks},
          {"events", events},
          {"output", lines},
          {"output_dropped_lines", output_dropped},
          {"output_cut_lines", output_cut},
          {"output_log", output_log}};
}

void stop_running_program() { request_stop(); }

Status check_checker(const Checker& checker) {
  auto compiled = OutputChecker::compile(checker);
  return compiled.ok() ? Status{} : Status{std::move(compiled).take_error()};
}

Result<ExecResult> exec_under_faults(const ExecOptions& options) {
  auto checker = OutputChecker::compile(options.checker);
  if (!checker.ok()) return std::move(checker).take_error();
  const std::string log = options.work_dir + "/faults.jsonl";
  std::remove(log.c_str());
  // The plan through a file: one of 10,000 faults is larger than an environment may hold.
  const std::string plan = options.work_dir + "/fault-plan.json";
  FAULTLINE_RETURN_IF_ERROR(reports::write_file_atomically(plan, options.plan.dump()));
  auto joined = [](const std::string& first, const char* variable, const char* separator) {
    const char* inherited = std::getenv(variable);
    return inherited != nullptr && *inherited != '\0' ? first + separator + inherited : first;
  };
  Environment environment = {
      {"FI_PROVIDER_PATH", joined(options.interpose_dir, "FI_PROVIDER_PATH", ":")},
      {"FI_HOOK", "faultline"},
      {"FAULTLINE_FAULTS", "@" + plan},
      {"FAULTLINE_FAULT_LOG", log}};
  // Preloaded: the verbs interposer, and the libfabric one again for programs that set their
  // own FI_PROVIDER_PATH (its fi_fabric wraps what the hook did not), where this build has them.
  std::string preload;
  for (const char* library : {"/libfaultline-verbs.so", "/libfaultline-fi.so"}) {
    const std::string path = options.interpose_dir + library;
    if (std::filesystem::exists(path)) preload += (preload.empty() ? "" : ":") + path;
  }
  if (!preload.empty()) environment.emplace_back("LD_PRELOAD", joined(preload, "LD_PRELOAD", ":"));
  ExecResult result;
  result.output_log = options.work_dir + "/output.log";
  const int output_log = ::open(result.output_log.c_str(),
                                O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (output_log < 0) return errno_error("open", errno, result.output_log);
  OutputReader output(output_log, [&](const OutputLine& line) { checker->watch(line); });
  auto run = run_process_group(options.command, environment, options.deadline, output);
  ::close(output_log);
  if (!run.ok()) return std::move(run).take_error();
  if (!output.log_error().empty())
    return Error{ErrorCode::kIoError, "write " + result.output_log + ": " + output.log_error()};
  result.exit_code = run->exit_code;
  result.signal = run->signal;
  result.timed_out = run->timed_out;
  result.stopped = run->stopped;
  result.seconds = run->seconds;
  result.stacks = run->stacks;
  for (auto& line : output.kept()) result.output.push_back(std::move(line.text));
  result.output_dropped = output.dropped_lines();
  result.output_cut = output.cut_lines();
  result.events = read_events(log);
  for (const auto& event : result.events)
    result.faults_applied += event.value("event", "") == "fault";
  judge(result, run.value(), options, checker.value());
  return result;
}

}  // namespace faultline::harness::sut
