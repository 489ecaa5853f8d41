// faultline sut exec: one run of any program (a launcher such as mpirun included) under the
// interposers, with faults, judged: detected, silent-corruption, hang, crashed, masked,
// undetected, not-reached, or pass/fail (without a fault, or no fault fired and it failed).
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "faultline/core/printable_text.hpp"
#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/base/process.hpp"
#include "faultline/harness/devices/device_profiles.hpp"
#include "faultline/harness/sut/exec_plan.hpp"
#include "faultline/harness/sut/fault_points.hpp"
#include "faultline/harness/sut/sut_exec.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/directory_lock.hpp"
#include "options/commands.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

namespace {

using nlohmann::json;

struct SutExecOptions {
  std::vector<std::string> plans;
  std::vector<std::string> faults;
  std::vector<std::string> with;  ///< standing faults: the conditions of the run
  std::string point;
  bool peer = false;
  double deadline_seconds = 60;
  double quiet_seconds = 0;
  harness::sut::Checker checker;
  std::string report_dir = "faultline-report";
  std::vector<std::string> command;
};

void print_result(const harness::sut::ExecResult& result, const std::string& report) {
  std::cout << "faultline sut exec: " << harness::sut::to_string(result.verdict) << " after "
            << result.seconds << " s, " << result.faults_applied << " fault(s) applied\n";
  if (!result.evidence.empty()) std::cout << "  evidence: " << result.evidence << "\n";
  if (result.fault_to_error_ms)
    std::cout << "  first error line " << *result.fault_to_error_ms << " ms after the fault\n";
  if (!result.hint.empty()) std::cout << "  hint: " << result.hint << "\n";
  std::cout << "  report: " << report << "\n";
}

// The plan of a sweep's point (--point ID): the fault its id names; a limits point's from its
// profile.
Result<json> plan_of_point(const SutExecOptions& options) {
  if (!options.plans.empty() || !options.faults.empty())
    return Error{ErrorCode::kInvalidArgument, "--point gives the fault: no --plan or --fault"};
  auto point = harness::sut::point_from_id(options.point);
  if (!point.ok()) return std::move(point).take_error();
  json fault = point->fault;
  if (point->family == "limits") {
    const std::string& target = point->target;
    const auto dot = target.find('.');
    const std::string name = target.substr(0, dot);
    auto profiles = harness::select_device_profiles(name, harness::default_devices_dir());
    if (!profiles.ok()) return std::move(profiles).take_error();
    const harness::DeviceProfile& profile = profiles->front();
    fault = dot == std::string::npos ? profile.limits_fault()
                                     : profile.one_limit_fault(target.substr(dot + 1));
    if (fault.is_null())
      return Error{ErrorCode::kInvalidArgument, "--point " + options.point + ": " + name +
                                                    " has no cap " + target.substr(dot + 1)};
  }
  return json{{"faults", json::array({fault})}};
}

int run_sut_exec(const SutExecOptions& options) {
  if (options.command.empty())
    return usage_error("sut exec", "no command: faultline sut exec [options] -- COMMAND");
  if (!(options.deadline_seconds > 0 && options.deadline_seconds <= 86400))
    return usage_error("sut exec", "--deadline must be between 0 and 86400 seconds");
  auto plan = options.point.empty()
                  ? harness::sut::plan_from_options(options.plans, options.faults, options.with)
                  : plan_of_point(options);
  if (!plan.ok()) return usage_error("sut exec", plan.error().describe());
  if (!options.point.empty()) {
    auto standing = harness::sut::plan_from_options({}, {}, options.with);
    if (!standing.ok()) return usage_error("sut exec", standing.error().describe());
    (*plan)["standing"] = standing->at("standing");
  }
  if (auto checker = harness::sut::check_checker(options.checker); !checker.ok())
    return usage_error("sut exec", checker.error().describe());
  harness::sut::ExecOptions exec;
  exec.command = options.command;
  exec.plan = plan.value();
  exec.deadline = std::chrono::milliseconds(static_cast<int64_t>(options.deadline_seconds * 1000));
  exec.quiet_limit = std::chrono::milliseconds(static_cast<int64_t>(options.quiet_seconds * 1000));
  exec.checker = options.checker;
  exec.interpose_dir = harness::sut::default_interpose_dir();
  exec.work_dir = options.report_dir;
  exec.peer = options.peer;
  if (!std::filesystem::exists(exec.interpose_dir + "/libfaultline-fi.so")) {
    std::cerr << "faultline sut exec: no libfaultline-fi.so in " << exec.interpose_dir
              << "\n  hint: build the default preset, or set FAULTLINE_INTERPOSE_DIR\n";
    return harness::kExitHarnessError;
  }
  // Its own folder, one run at a time, writable before the program runs: a verdict is never
  // lost after it, nor two runs' evidence mixed.
  auto lock = reports::DirectoryLock::acquire(options.report_dir);
  if (!lock.ok()) return usage_error("sut exec", lock.error().describe_with_hint());
  if (::access(options.report_dir.c_str(), W_OK) != 0)
    return usage_error("sut exec", "--report-dir " + options.report_dir + ": not writable");
  // `sut run` ends a peer still waiting after the judged side ended, and a user's Ctrl-C or a
  // closed terminal ends the run: the program is judged (a hang, with stacks) and its report
  // written, not lost, and nothing it started is left.
  harness::stop_on_signals();
  auto result = harness::sut::exec_under_faults(exec);
  if (!result.ok()) {
    std::cerr << "faultline sut exec: " << result.error().describe_with_hint() << "\n";
    return harness::kExitHarnessError;
  }
  json report = result->to_json();
  report["command"] = json::array();
  for (const auto& argument : options.command)  // bytes that are not UTF-8 kept as \xNN
    report["command"].push_back(escape_invalid_utf8(argument));
  report["plan"] = plan.value();
  const std::string path = options.report_dir + "/sut.json";
  if (auto written = reports::write_file_atomically(path, report.dump(2) + "\n"); !written.ok()) {
    std::cerr << "faultline sut exec: " << written.error().describe() << "\n";
    return harness::kExitHarnessError;
  }
  print_result(result.value(), path);
  return harness::sut::exit_code_of(result->verdict);
}

std::vector<std::string>& command_line() {
  static std::vector<std::string> command;
  return command;
}

}  // namespace

const std::vector<std::string>& program_command_line() { return command_line(); }

int take_program_command(int argc, char** argv) {
  // Only `faultline sut exec|sweep ... -- COMMAND`, `faultline port-check ... -- COMMAND` and
  // `faultline slurm ... -- OPTIONS`: everything after the first `--` is the command (or the
  // coordinator's options), never parsed as faultline's.
  const bool sut_exec = argc >= 3 && std::string(argv[1]) == "sut" &&
                        (std::string(argv[2]) == "exec" || std::string(argv[2]) == "sweep");
  const bool port_check = argc >= 2 && std::string(argv[1]) == "port-check";
  const bool slurm = argc >= 2 && std::string(argv[1]) == "slurm";
  if (!sut_exec && !port_check && !slurm) return argc;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) != "--") continue;
    command_line().assign(argv + i + 1, argv + argc);
    return i;
  }
  return argc;
}

void add_sut_command(CLI::App& app, CommandAction& run) {
  CLI::App* sut = app.add_subcommand("sut", "Run your own program under faults and judge it");
  sut->require_subcommand(1);
  auto options = std::make_shared<SutExecOptions>();
  CLI::App* exec = sut->add_subcommand(
      "exec", "Run one command under the interposers with faults, and say how it reacted");
  exec->add_option("--plan", options->plans, "A fault plan file: {\"faults\": [...]}");
  exec->add_option("--fault", options->faults,
                   "One fault, keys of the plan: status=REM_ACCESS_ERR,nth=5,side=recv,rank=1");
  exec->add_option("--with", options->with,
                   "A standing fault, the run's condition (inline off beneath the fault judged): "
                   "kind=inline,mode=off; its firing is not what the verdict judges");
  exec->add_option("--point", options->point,
                   "A sweep's fault point, by the id its report gives (runs that point again)");
  exec->add_option("--deadline", options->deadline_seconds,
                   "Seconds before the run is a hang (stacks are taken)")
      ->capture_default_str()
      ->check(seconds_up_to(86400));
  exec->add_option("--quiet-limit", options->quiet_seconds,
                   "Seconds without a post or completion (the interposers count them under a plan "
                   "with a fault) before a still-running program is a hang; 0: the deadline alone")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  exec->add_flag("--peer", options->peer,
                 "A peer of the judged program (`sut run` passes it): when stopped, each "
                 "thread's innermost frame from /proc, not gdb's stacks");
  exec->add_option("--ok", options->checker.ok, "Regex the output of a correct run matches");
  exec->add_option("--wrong", options->checker.wrong, "Regex the output of wrong data matches");
  exec->add_option("--error", options->checker.error, "Regex of the line a detected error prints");
  exec->add_option("--report-dir", options->report_dir, "sut.json and the fault log go here")
      ->check(report_dir())
      ->capture_default_str();
  exec->footer(
      "Examples:\n"
      "  faultline sut exec --fault status=REM_ACCESS_ERR,nth=5 -- fi_pingpong -p tcp 127.0.0.1\n"
      "  faultline sut exec --plan faults.json --deadline 30 -- mpirun -n 2 ./allreduce\n"
      "Verdicts: detected, silent-corruption, hang, crashed, masked (a checker saw right\n"
      "output), undetected (exit 0, nothing checked), not-reached; pass or fail. Exit codes:\n"
      "0 pass, detected or masked; 1 any other verdict; 2 a usage error; 3 the harness could\n"
      "not run it.");
  exec->callback([options, &run] {
    options->command = program_command_line();
    run = [options] { return run_sut_exec(*options); };
  });
  add_sut_run_command(*sut, run);
  add_sut_sweep_command(*sut, run);
}

}  // namespace faultline::cli
