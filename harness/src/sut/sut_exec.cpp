#include "faultline/harness/sut/sut_exec.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <utility>

#include "faultline/harness/base/install_paths.hpp"
#include "faultline/harness/base/process.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "output_checker.hpp"
#include "process_group.hpp"
#include "progress_counter.hpp"
#include "sut_judge.hpp"

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

// The judged faults among `events`, and of those the lowered answers (`limits`).
std::pair<size_t, size_t> count_faults(const std::vector<json>& events, const json& plan) {
  const JudgedFaults judged(plan);
  size_t applied = 0;
  size_t lowered = 0;
  for (const auto& event : events) {
    if (!judged.judged(event)) continue;
    ++applied;
    lowered += event.value("kind", "") == "limits" && event.contains("lowered");
  }
  return {applied, lowered};
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
          {"limits_lowered", limits_lowered},
          {"first_error_line", first_error_line},
          {"fault_to_error_ms", fault_to_error_ms ? json(*fault_to_error_ms) : json(nullptr)},
          {"evidence", evidence},
          {"hint", hint},
          {"stacks", stacks},
          {"longest_quiet_ms", longest_quiet_ms ? json(*longest_quiet_ms) : json(nullptr)},
          {"quiet", quiet},
          {"events", events},
          {"output", lines},
          {"output_dropped_lines", output_dropped},
          {"output_cut_lines", output_cut},
          {"output_log", output_log}};
}

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
  // The progress counter every process of the program adds its posts and completions to.
  const ProgressCounter progress;
  Environment environment = {
      {"FI_PROVIDER_PATH", joined(options.interpose_dir, "FI_PROVIDER_PATH", ":")},
      {"FI_HOOK", "faultline"},
      {"FAULTLINE_FAULTS", "@" + plan},
      {"FAULTLINE_FAULT_LOG", log},
      {"FAULTLINE_PROGRESS", progress.path()}};
  // Preloaded: the verbs interposer, and the libfabric one again for programs that set their
  // own FI_PROVIDER_PATH (its fi_fabric wraps what the hook did not), where this build has them.
  std::string preload;
  for (const char* library : {"/libfaultline-verbs.so", "/libfaultline-fi.so"}) {
    const std::string path = options.interpose_dir + library;
    if (std::filesystem::exists(path)) preload += (preload.empty() ? "" : ":") + path;
  }
  // The program's stdout line-buffered, as `stdbuf -oL` makes it (coreutils' own library):
  // what a program stopped at its deadline or killed had written is in its output, not lost
  // in a pipe's buffer.
  for (const char* stdbuf :
       {"/usr/libexec/coreutils/libstdbuf.so", "/usr/lib/coreutils/libstdbuf.so"}) {
    if (!std::filesystem::exists(stdbuf)) continue;
    preload += (preload.empty() ? "" : ":") + std::string(stdbuf);
    environment.emplace_back("_STDBUF_O", "L");
    break;
  }
  if (!preload.empty()) environment.emplace_back("LD_PRELOAD", joined(preload, "LD_PRELOAD", ":"));
  ExecResult result;
  result.output_log = options.work_dir + "/output.log";
  const int output_log = ::open(result.output_log.c_str(),
                                O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (output_log < 0) return errno_error("open", errno, result.output_log);
  OutputReader output(output_log, [&](const OutputLine& line) { checker->watch(line); });
  // The interposers wrap nothing under a plan without a fault (a program they leave alone
  // costs nothing a call): nothing is counted then, and quiet says nothing.
  const bool counted = !options.plan.value("faults", json::array()).empty() ||
                       !options.plan.value("standing", json::array()).empty();
  auto run = run_process_group(options.command, environment, options.deadline, output, options.peer,
                               {counted ? progress.count() : nullptr, options.quiet_limit});
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
  result.longest_quiet_ms = run->longest_quiet_ms;
  result.quiet = run->quiet;
  for (auto& line : output.kept()) result.output.push_back(std::move(line.text));
  result.output_dropped = output.dropped_lines();
  result.output_cut = output.cut_lines();
  result.events = read_events(log);
  std::tie(result.faults_applied, result.limits_lowered) =
      count_faults(result.events, options.plan);
  judge(result, run.value(), options, checker.value());
  return result;
}

size_t faults_acted_so_far(const std::string& work_dir) {
  std::ifstream plan_file(work_dir + "/fault-plan.json");
  const json plan = json::parse(plan_file, nullptr, false);
  if (plan.is_discarded()) return 0;
  const auto [applied, lowered] = count_faults(read_events(work_dir + "/faults.jsonl"), plan);
  return applied - lowered;
}

}  // namespace faultline::harness::sut
