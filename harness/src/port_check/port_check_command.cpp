// faultline port-check: the user's program, unmodified, under the verbs interposer; every
// resource it asks of the device held against each target NIC's profile (observe), or the
// program shown one target's limits and refused as that driver refuses (--enforce).
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "faultline/core/printable_text.hpp"
#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/devices/device_profiles.hpp"
#include "faultline/harness/port_check/port_check.hpp"
#include "faultline/harness/runs/report_document.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/directory_lock.hpp"
#include "faultline/reports/owned_directory.hpp"
#include "faultline/reports/report_sink.hpp"
#include "options/commands.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

namespace {

using nlohmann::json;

struct PortCheckCommandOptions {
  std::string profiles;
  std::string enforce;
  std::string profile_dir;
  std::string report_dir = "faultline-report";
  double deadline_seconds = 120;
  std::string unknown;  ///< what a target that cannot be judged counts as: "", pass or fail
};

void print_table(const harness::port_check::PortCheckResult& result, std::ostream& out) {
  out << "program: " << harness::sut::to_string(result.run.verdict) << " here ("
      << result.requests.size() << " resource request(s) seen)\n";
  if (!result.targets.empty() && !result.targets.front().not_reached.empty())
    out << "nothing was checked: " << result.targets.front().not_reached << "\n";
  out << std::left << std::setw(24) << "target"
      << "verdict\n";
  for (const auto& target : result.targets) {
    out << std::setw(24) << target.target << target.verdict;
    if (!target.unknown.empty()) {
      out << " (unknown:";
      for (const auto& limit : target.unknown) out << " " << limit;
      out << ")";
    }
    out << "\n";
    // The first is the call that would fail there first; each finding once, with its sites.
    for (const auto& refusal : target.refusals) {
      out << "    " << harness::port_check::finding_line(refusal) << "\n";
      if (!refusal.stack.empty())
        out << "      at " << refusal.stack.front().get<std::string>() << "\n";
      for (const auto& site : refusal.sites) out << "      at " << site.get<std::string>() << "\n";
    }
  }
}

// report.json, junit.xml, summary.md: one scenario per target, each file written once (the
// targets are judged together after the run: linear in their number).
Status write_report(const harness::port_check::PortCheckResult& result, const std::string& program,
                    const std::string& dir, bool unknown_fails) {
  const transports::Target target{"verbs", "", ""};
  harness::ReportDocument document(harness::this_machine_as_agent(target),
                                   {"port-check", target, 0, false}, result.targets.size());
  for (size_t i = 0; i < result.targets.size(); ++i)
    document.add(
        harness::port_check::target_scenario(result.targets[i], i, program, unknown_fails));
  for (auto& sink : reports::report_directory_sinks(dir))
    FAULTLINE_RETURN_IF_ERROR(sink->on_run_finished(document.json()));
  return {};
}

// The targets and the profile to enforce, from --profile and --enforce; a usage error names
// the option.
Result<harness::port_check::PortCheckOptions> chosen_targets(
    const PortCheckCommandOptions& options) {
  const std::string dir =
      options.profile_dir.empty() ? harness::default_devices_dir() : options.profile_dir;
  auto targets = harness::select_device_profiles(options.profiles, dir);
  if (!targets.ok()) return std::move(targets).take_error();
  if (targets->empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 "--profile '" + options.profiles + "' names no profile: nothing would be checked"}
        .with_hint(
            "name one or more (hns_roce-hip09, mlx5, all); faultline devices --profiles "
            "lists them");
  }
  harness::port_check::PortCheckOptions check;
  check.targets = std::move(targets).value();
  if (options.enforce.empty()) return check;
  auto enforced = harness::select_device_profiles(options.enforce, dir);
  if (!enforced.ok()) return std::move(enforced).take_error();
  if (enforced->size() != 1)
    return Error{ErrorCode::kInvalidArgument, "--enforce " + options.enforce + ": names " +
                                                  std::to_string(enforced->size()) +
                                                  " profiles; name exactly one"};
  check.enforced = enforced->front();
  return check;
}

int run_port_check(const PortCheckCommandOptions& options) {
  const auto& command = program_command_line();
  if (command.empty())
    return usage_error("port-check", "no command: faultline port-check --profile NAMES -- COMMAND");
  if (!(options.deadline_seconds > 0 && options.deadline_seconds <= 86400))
    return usage_error("port-check", "--deadline must be between 0 and 86400 seconds");
  auto chosen = chosen_targets(options);
  if (!chosen.ok()) return usage_error("port-check", chosen.error().describe());
  harness::port_check::PortCheckOptions check = std::move(chosen).value();
  check.command = command;
  check.deadline = std::chrono::milliseconds(static_cast<int64_t>(options.deadline_seconds * 1000));
  check.interpose_dir = harness::sut::default_interpose_dir();
  check.work_dir = options.report_dir + "/program";
  if (!std::filesystem::exists(check.interpose_dir + "/libfaultline-verbs.so")) {
    std::cerr << "faultline port-check: no libfaultline-verbs.so in " << check.interpose_dir
              << "\n  hint: build with rdma-core's headers, or set FAULTLINE_INTERPOSE_DIR\n";
    return harness::kExitHarnessError;
  }
  // Its folder, one command at a time (a sweep or another port-check there is refused).
  auto lock = reports::DirectoryLock::acquire(options.report_dir);
  if (!lock.ok()) return usage_error("port-check", lock.error().describe_with_hint());
  if (auto made = reports::make_owned_directory(check.work_dir); !made.ok())
    return usage_error("port-check", "--report-dir " + made.error().describe());
  auto result = harness::port_check::port_check(check);
  if (!result.ok()) {
    std::cerr << "faultline port-check: " << result.error().describe_with_hint() << "\n";
    return harness::kExitHarnessError;
  }
  print_table(result.value(), std::cout);
  json program_log = result->run.to_json();
  program_log["command"] = json::array();
  for (const auto& argument : command)
    program_log["command"].push_back(escape_invalid_utf8(argument));
  if (auto written =
          reports::write_file_atomically(check.work_dir + "/sut.json", program_log.dump(2) + "\n");
      !written.ok()) {
    std::cerr << "faultline port-check: " << written.error().describe() << "\n";
    return harness::kExitHarnessError;
  }
  std::string program;
  for (const auto& word : command)
    program += (program.empty() ? "" : " ") + escape_invalid_utf8(word);
  if (auto written =
          write_report(result.value(), program, options.report_dir, options.unknown == "fail");
      !written.ok()) {
    std::cerr << "faultline port-check: " << written.error().describe() << "\n";
    return harness::kExitHarnessError;
  }
  if (check.enforced) {
    std::cout << "under " << check.enforced->name << "'s limits the program was "
              << harness::sut::to_string(result->run.verdict)
              << (result->run.evidence.empty() ? "" : ": " + result->run.evidence) << "\n";
  }
  std::cout << "report: " << options.report_dir << "/report.json\n";
  const auto any = [&](const char* verdict) {
    return std::any_of(result->targets.begin(), result->targets.end(),
                       [&](const auto& target) { return target.verdict == verdict; });
  };
  if (any("not-reached")) return harness::kExitIncomplete;
  if (any("would-fail")) return harness::kExitConformanceFailure;
  if (!any("unknown") || options.unknown == "pass") return harness::kExitPass;
  return options.unknown == "fail" ? harness::kExitConformanceFailure : harness::kExitUnknown;
}

}  // namespace

void add_port_check_command(CLI::App& app, CommandAction& run) {
  auto options = std::make_shared<PortCheckCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "port-check", "Hold what your program asks of the NIC against other NICs' limits");
  command
      ->add_option("--profile", options->profiles,
                   "Target profiles, comma-separated: names of scenarios/devices/, a prefix "
                   "(mlx5, hns_roce), or all")
      ->required();
  command->add_option("--enforce", options->enforce,
                      "Show the program this one target's limits and refuse as its driver does");
  command->add_option("--profile-dir", options->profile_dir,
                      "Where the profiles are (default: the scenario directory's devices/)");
  command
      ->add_option("--deadline", options->deadline_seconds,
                   "Seconds the program may run (then its stacks are taken)")
      ->capture_default_str()
      ->check(seconds_up_to(86400));
  command
      ->add_option("--unknown", options->unknown,
                   "What a target that cannot be judged (a limit its profile lacks or knows "
                   "only from below) counts as: pass or fail (default: exit 5)")
      ->check(CLI::IsMember({"pass", "fail"}));
  command
      ->add_option("--report-dir", options->report_dir,
                   "report.json, junit.xml, summary.md; the program's log in program/")
      ->check(report_dir())
      ->capture_default_str();
  command->footer(
      "Examples:\n"
      "  faultline port-check --profile all -- ./my_stack --tokens 65536\n"
      "  faultline port-check --profile hns_roce,mlx5-cx7 -- ib_send_lat -I 256 server\n"
      "  faultline port-check --profile all --enforce hns_roce-hip08 -- ./my_stack\n"
      "Exit codes: 0 every target runs it, 1 a target would refuse a request (or cannot say,\n"
      "under --unknown fail), 2 a usage error, 3 the harness could not run it, 4 nothing was\n"
      "checked (the program asked the device for nothing: no device, or the interposer never\n"
      "reached it), 5 a target cannot say (a limit its profile lacks or knows only from\n"
      "below; --unknown pass: 0).");
  command->callback([options, &run] { run = [options] { return run_port_check(*options); }; });
}

}  // namespace faultline::cli
