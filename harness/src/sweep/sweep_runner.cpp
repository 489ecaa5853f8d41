// A sweep's runs: the clean one under `observe` (the map of the program's call sites), then one
// `faultline sut exec` per point, `jobs` at a time, until the points or the budget run out.
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iomanip>
#include <ostream>

#include "faultline/core/printable_text.hpp"
#include "faultline/harness/base/process.hpp"
#include "faultline/harness/base/strict_json.hpp"
#include "faultline/harness/sut/sut_exec.hpp"
#include "faultline/harness/sut/sut_role.hpp"
#include "faultline/harness/sut/sut_run.hpp"
#include "faultline/harness/sweep/sweep.hpp"

namespace faultline::harness::sweep {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// The command with `{run}` as the run's own folder (a place of its own for its files).
std::vector<std::string> command_for(const std::vector<std::string>& command,
                                     const std::string& folder) {
  std::vector<std::string> expanded;
  for (std::string argument : command) {
    for (auto at = argument.find("{run}"); at != std::string::npos;
         at = argument.find("{run}", at + folder.size()))
      argument.replace(at, 5, folder);
    expanded.push_back(std::move(argument));
  }
  return expanded;
}

// How long a point may run, and may go without a post or completion (0: no such limit).
struct PointLimits {
  double deadline_seconds = 0;
  double quiet_seconds = 0;
};

// A point is a hang once quiet five times as long as the clean run ever was (its stretches
// before the first post and after the last completion included), and at least 2 s: a busy
// host's time slices are not a hang. Without a count from the clean run (nothing went through
// the interposers), or one no shorter than the deadline, the deadline alone.
constexpr int kQuietFactor = 5;
double quiet_limit_of(const json& clean, double deadline_seconds) {
  constexpr double kLeastQuietSeconds = 2;
  const json longest = clean.value("longest_quiet_ms", json());
  if (!longest.is_number()) return 0;
  const double quiet = std::max(kQuietFactor * longest.get<double>() / 1000, kLeastQuietSeconds);
  return quiet < deadline_seconds ? std::ceil(quiet) : 0;
}

Result<pid_t> start_run(const SweepOptions& options, const std::string& folder, json faults,
                        PointLimits limits) {
  std::error_code ignored;
  std::filesystem::remove_all(folder, ignored);  // a run's files are its own, never an earlier's
  // Made here, before the run starts: points running side by side share the parent.
  if (std::error_code error; !std::filesystem::create_directories(folder, error) && error)
    return errno_error("mkdir", error.value(), folder + ", a sweep run's folder");
  sut::RoleLaunch launch;
  launch.faultline_binary = options.faultline_binary;
  launch.dir = folder;
  launch.command = command_for(options.command, std::filesystem::absolute(folder));
  launch.faults = std::move(faults);
  launch.with = options.standing;
  launch.deadline_seconds = limits.deadline_seconds;
  launch.quiet_seconds = limits.quiet_seconds;
  launch.checker = options.checker;
  launch.judged = true;
  return sut::start_role(launch);
}

// Waits for one of the runs (`pid`, or any with -1) to end and returns it. A stop asked of the
// sweep (a signal) is passed on to every run still going (`running`), once: each stops its
// program as at its deadline and writes its sut.json.
pid_t wait_run(pid_t pid, const std::vector<pid_t>& running) {
  static bool passed_on = false;
  for (;;) {
    if (stop_requested() && !passed_on) {
      passed_on = true;
      for (pid_t run : running) kill(run, SIGTERM);
    }
    const pid_t ended = waitpid(pid, nullptr, 0);
    if (ended >= 0 || errno != EINTR) return ended;
  }
}

// The clean run: `observe` with the call sites mapped, judged as a run without faults.
Result<json> clean_run(const SweepOptions& options, const std::string& folder) {
  const json observe = json::array({{{"kind", "observe"}, {"sites", true}}});
  auto pid = start_run(options, folder, observe, {options.deadline_seconds.value_or(600), 0});
  if (!pid.ok()) return std::move(pid).take_error();
  wait_run(pid.value(), {pid.value()});
  if (stop_requested()) {
    return Error{ErrorCode::kIoError,
                 "interrupted by " + stop_signal_name() + " during the clean run (" + folder + ")"};
  }
  json document = sut::read_sut_json(folder);
  const json summary = sut::role_summary(document, folder);
  if (summary.value("verdict", "") != "pass") {
    return Error{ErrorCode::kInvalidArgument, "the clean run (no fault, only observed) ended " +
                                                  summary.value("verdict", std::string("error")) +
                                                  ": " + summary.value("evidence", std::string()) +
                                                  " (its output: " + folder + "/output.log)"}
        .with_hint(
            "a sweep needs a program that passes without faults: run it under `faultline "
            "sut exec` alone first (and give --ok if it prints a result)");
  }
  return document;
}

// Runs `runs` (each its point's folder under DIR/points), `jobs` at a time; none starts after
// the budget.
Status run_points(const SweepOptions& options, PointLimits limits, Clock::time_point started,
                  SweepResult& result, std::ostream& progress, const SweepProgress& on_progress) {
  struct Running {
    pid_t pid;
    size_t index;
  };
  std::vector<Running> running;
  size_t next = 0;
  const size_t total = result.runs.size();
  auto folder_of = [&](const PointRun& run) {
    return options.report_dir + "/points/" + std::to_string(run.number);
  };
  Status failed;
  while (next < total || !running.empty()) {
    if (stop_requested() && next < total) {
      result.stopped = "interrupted by " + stop_signal_name() + ": " +
                       std::to_string(total - next) + " point(s) not run";
      for (; next < total; ++next)
        result.runs[next].not_run = "interrupted by " + stop_signal_name();
    }
    while (failed.ok() && running.size() < std::max(1U, options.jobs) && next < total) {
      if (options.budget && Clock::now() - started >= *options.budget) {
        result.stopped = "the budget of " + std::to_string(options.budget->count() / 1000) +
                         " s ran out: " + std::to_string(total - next) + " point(s) not run";
        next = total;
        break;
      }
      PointRun& run = result.runs[next];
      auto pid = start_run(options, folder_of(run), json::array({run.point.fault}), limits);
      if (pid.ok()) {
        running.push_back({pid.value(), next});
      } else {
        run.summary = sut::role_summary(json(), folder_of(run));
        (*run.summary)["evidence"] = pid.error().describe();
      }
      ++next;
    }
    if (running.empty()) break;
    std::vector<pid_t> pids(running.size());
    std::transform(running.begin(), running.end(), pids.begin(),
                   [](const Running& one) { return one.pid; });
    const pid_t ended = wait_run(-1, pids);
    auto found = std::find_if(running.begin(), running.end(),
                              [&](const Running& one) { return one.pid == ended; });
    if (found == running.end()) continue;
    const size_t index = found->index;
    running.erase(found);
    PointRun& run = result.runs[index];
    run.summary = sut::read_role_summary(folder_of(run));
    if (stop_requested() && run.summary->value("verdict", "") == "hang") {
      // Stopped because the sweep was: no claim about the program.
      run.not_run = "interrupted by " + stop_signal_name() + " while it ran (its stacks and " +
                    "output: " + folder_of(run) + ")";
      run.summary.reset();
    }
    progress << "[" << (index + 1) << "/" << total << "] " << std::left << std::setw(17)
             << (run.summary ? run.summary->value("verdict", "error") : "not-run") << std::right
             << std::fixed << std::setprecision(1) << std::setw(6)
             << (run.summary ? run.summary->value("seconds", 0.0) : 0.0) << " s  "
             << printable(run.point.name()) << "\n"
             << std::flush;
    if (failed.ok()) failed = on_progress(result, &run);
  }
  return failed;
}

}  // namespace

Result<SweepResult> run_sweep(const SweepOptions& options, std::ostream& progress,
                              const SweepProgress& on_progress) {
  const auto started = Clock::now();
  SweepResult result;
  const std::string clean_folder = options.report_dir + "/clean";
  auto clean_document = clean_run(options, clean_folder);
  if (!clean_document.ok()) return std::move(clean_document).take_error();
  const json& clean = clean_document.value();
  result.clean = sut::role_summary(clean, clean_folder);
  std::vector<json> events;
  for (const json& event : clean.value("events", json::array())) events.push_back(event);
  result.sites = sut::call_sites(events);
  if (result.sites.empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 "the clean run reached no post or poll of the program (" +
                     std::to_string(result.clean.value("instrumented", 0)) +
                     " objects instrumented): there is nothing to sweep"}
        .with_hint(
            "the program must reach libibverbs or libfabric through the interposers: "
            "see " +
            clean_folder + "/faults.jsonl and docs/testing-your-own-stack.md");
  }
  std::vector<json> requests;
  for (const json& event : events)
    if (text_at(event, "event") == "request") requests.push_back(event);
  std::vector<sut::FaultPoint> points = choose_points(result.sites, requests, options);
  if (options.max_points != 0 && points.size() > options.max_points)
    points.resize(options.max_points);
  result.points_total = points.size();
  for (size_t number = 0; number < points.size(); ++number)
    if (number % options.shard_count == options.shard_index - 1)
      result.runs.push_back({points[number], number, std::nullopt});
  // A point's deadline, from the clean run measured here: three of its runs and five seconds.
  const double deadline =
      options.deadline_seconds.value_or(std::ceil(3 * result.clean.value("seconds", 0.0) + 5));
  const PointLimits limits{deadline, quiet_limit_of(result.clean, deadline)};
  progress << "faultline sut sweep: the clean run passed in " << std::fixed << std::setprecision(1)
           << result.clean.value("seconds", 0.0) << " s; " << result.sites.size() << " call sites, "
           << result.points_total << " points (" << result.runs.size() << " in this shard), "
           << deadline << " s a point at most";
  if (limits.quiet_seconds > 0) {
    progress << ", a hang once " << limits.quiet_seconds << " s pass without a post or completion ("
             << kQuietFactor << " x the clean run's longest such stretch, "
             << result.clean.value("longest_quiet_ms", 0) << " ms)";
  }
  progress << "\n";
  if (options.budget) {
    // What the budget holds, as a point takes about a clean run, and when the sweep ends at the
    // latest (no point starts after the budget; the last may hang to its deadline, and its
    // stacks take up to their own budget): said before the points run, so a budget too small
    // for the sweep asked is no surprise.
    const double budget_seconds = static_cast<double>(options.budget->count()) / 1000;
    const double point_seconds = std::max(result.clean.value("seconds", 0.0), 0.1);
    const size_t fits = std::min(result.runs.size(),
                                 static_cast<size_t>(std::floor(budget_seconds / point_seconds)) *
                                     std::max(1U, options.jobs));
    const auto stacks_seconds = sut::kHangStacksBudget.count();
    progress << "faultline sut sweep: the budget of " << budget_seconds << " s fits about " << fits
             << " of the " << result.runs.size() << " points (each about a clean run, "
             << options.jobs << " at a time); a hang takes "
             << (limits.quiet_seconds > 0
                     ? std::to_string(static_cast<int>(limits.quiet_seconds)) + " s quiet or up to "
                     : std::string("up to "))
             << deadline << " s, and its stacks up to " << stacks_seconds
             << " s: the sweep ends within " << budget_seconds + deadline + stacks_seconds
             << " s\n";
  }
  progress << std::flush;
  FAULTLINE_RETURN_IF_ERROR(on_progress(result, nullptr));
  FAULTLINE_RETURN_IF_ERROR(run_points(options, limits, started, result, progress, on_progress));
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return result;
}

}  // namespace faultline::harness::sweep
