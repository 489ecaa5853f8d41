// faultline sut sweep: every fault family at every call site of a program, one run a point,
// into one report (a matrix of sites by families); shards of a sweep collected into one.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <regex>

#include "faultline/harness/base/duration.hpp"
#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/base/process.hpp"
#include "faultline/harness/runs/report_reader.hpp"
#include "faultline/harness/sut/exec_plan.hpp"
#include "faultline/harness/sut/sut_exec.hpp"
#include "faultline/harness/sweep/sweep.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/directory_lock.hpp"
#include "options/commands.hpp"
#include "options/metrics_options.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

namespace {

using nlohmann::json;

struct SutSweepOptions {
  std::string points = "first,middle,last";
  uint64_t seed = 1;
  std::string profiles;
  unsigned jobs = 1;
  std::string budget;
  size_t max_points = 0;
  double deadline_seconds = 0;
  harness::sut::Checker checker;
  std::string report_dir = "faultline-report";
  std::string baseline;
  std::string shard = "1/1";
  std::vector<std::string> allow;
  std::vector<std::string> with;
  std::vector<std::string> collect;
  bool partial_ok = false;
  MetricsOptions metrics_options;
  std::vector<std::string> command;
};

int usage(const std::string& message) { return usage_error("sut sweep", message); }

// The sweep section of a sweep's report.json, read as every report is (its schema checked, so
// what is merged or compared holds what a sweep writes).
Result<json> sweep_of(const std::string& report_file) {
  auto report = harness::read_report(report_file);
  if (!report.ok()) return std::move(report).take_error();
  if (!report->contains("sweep"))
    return Error{ErrorCode::kInvalidArgument, report_file + ": not the report.json of a sweep"};
  return report->at("sweep");
}

// The sweep's options from the command line; a usage error says which is wrong.
Result<harness::sweep::SweepOptions> sweep_options(const SutSweepOptions& options) {
  harness::sweep::SweepOptions sweep;
  const auto bad = [](const std::string& text) { return Error{ErrorCode::kInvalidArgument, text}; };
  if (options.points != "all" && options.points != "first,middle,last")
    return bad("--points must be first,middle,last or all; got " + options.points);
  sweep.every_occurrence = options.points == "all";
  sweep.seed = options.seed;
  if (!options.profiles.empty()) {
    auto profiles =
        harness::select_device_profiles(options.profiles, harness::default_devices_dir());
    if (!profiles.ok()) return std::move(profiles).take_error();
    sweep.profiles = std::move(profiles).value();
  }
  if (options.jobs < 1 || options.jobs > 64) return bad("--jobs must be 1 to 64");
  sweep.jobs = options.jobs;
  if (!options.budget.empty()) {
    sweep.budget = harness::parse_duration(options.budget);
    if (!sweep.budget) return bad("--budget " + options.budget + ": a time such as 6m, 360s or 1h");
  }
  sweep.max_points = options.max_points;
  if (options.deadline_seconds < 0 || options.deadline_seconds > 86400)
    return bad("--deadline must be between 0 and 86400 seconds (0: from the clean run)");
  if (options.deadline_seconds > 0) sweep.deadline_seconds = options.deadline_seconds;
  std::smatch shard;
  if (!std::regex_match(options.shard, shard, std::regex(R"(([0-9]{1,4})/([0-9]{1,4}))")) ||
      std::stoi(shard[1]) < 1 || std::stoi(shard[1]) > std::stoi(shard[2]))
    return bad("--shard " + options.shard + ": I/N with 1 <= I <= N, as 2/3");
  sweep.shard_index = static_cast<unsigned>(std::stoi(shard[1]));
  sweep.shard_count = static_cast<unsigned>(std::stoi(shard[2]));
  if (const std::string wrong = harness::sut::check_allowed_verdicts(options.allow); !wrong.empty())
    return bad("--allow: " + wrong);
  sweep.allow = options.allow;
  auto standing = harness::sut::plan_from_options({}, {}, options.with);
  if (!standing.ok()) return std::move(standing).take_error();
  sweep.standing = standing->at("standing");
  if (auto checker = harness::sut::check_checker(options.checker); !checker.ok())
    return std::move(checker).take_error();
  sweep.checker = options.checker;
  sweep.command = options.command;
  sweep.faultline_binary = harness::own_executable();
  sweep.report_dir = options.report_dir;
  sweep.partial_ok = options.partial_ok;
  return sweep;
}

// Writes `section` (shards collected) as one report, its files once: linear in the points.
int write_all(const json& section, const SutSweepOptions& options, reports::Metrics* metrics) {
  harness::sweep::SweepReport report(options.report_dir, metrics);
  Status written = report.start(section, false);
  if (written.ok()) written = report.add_points(section, section.at("points"));
  if (written.ok()) written = report.finish(section);
  if (!written.ok()) {
    std::cerr << "faultline sut sweep: " << written.error().describe_with_hint() << "\n";
    return harness::kExitHarnessError;
  }
  return harness::sweep::sweep_exit_code(section);
}

// --baseline's sweep, read before anything runs: null without one.
Result<json> baseline_of(const SutSweepOptions& options) {
  if (options.baseline.empty()) return json();
  auto before = sweep_of(options.baseline);
  if (!before.ok())
    return Error{ErrorCode::kInvalidArgument, "--baseline " + before.error().message};
  return before;
}

int collect(const SutSweepOptions& options, reports::Metrics* metrics) {
  auto baseline = baseline_of(options);
  if (!baseline.ok()) return usage(baseline.error().describe());
  auto lock = reports::DirectoryLock::acquire(options.report_dir);
  if (!lock.ok()) return usage(lock.error().describe_with_hint());
  std::vector<json> sections;
  for (const auto& dir : options.collect) {
    auto section = sweep_of(dir + "/report.json");
    if (!section.ok()) return usage(section.error().describe());
    sections.push_back(std::move(section).value());
  }
  auto merged = harness::sweep::merge_sections(sections, options.collect);
  if (!merged.ok()) return usage(merged.error().describe());
  json section = std::move(merged).value();
  section["partial_ok"] = options.partial_ok;
  if (!baseline->is_null()) section["changes"] = harness::sweep::changes_since(*baseline, section);
  const int code = write_all(section, options, metrics);
  std::cout << "faultline sut sweep: collected " << options.collect.size()
            << " shard(s): " << section.value("score_line", "")
            << "\n  report: " << options.report_dir << "/report.json\n";
  return code;
}

int run_sut_sweep(const SutSweepOptions& options) {
  auto metrics = options.metrics_options.start();
  if (!metrics.ok()) return usage(metrics.error().describe_with_hint());
  if (!options.collect.empty()) {
    if (!options.command.empty()) return usage("--collect takes report folders, not a command");
    return options.metrics_options.finish("sut sweep", metrics->get(),
                                          collect(options, metrics->get()));
  }
  if (options.command.empty()) return usage("no command: faultline sut sweep [options] -- COMMAND");
  auto sweep = sweep_options(options);
  if (!sweep.ok()) return usage(sweep.error().describe());
  auto baseline = baseline_of(options);
  if (!baseline.ok()) return usage(baseline.error().describe());
  auto lock = reports::DirectoryLock::acquire(options.report_dir);
  if (!lock.ok()) return usage(lock.error().describe_with_hint());
  if (::access(options.report_dir.c_str(), W_OK) != 0)
    return usage("--report-dir " + options.report_dir + ": not writable");
  harness::sweep::SweepReport report(options.report_dir, metrics->get());
  bool started = false;
  // SIGTERM, SIGINT or SIGHUP (or a program that sends one here): every point running is
  // stopped as at its deadline, its sut.json written; the report says which points did not run.
  harness::stop_on_signals();
  auto result = harness::sweep::run_sweep(
      sweep.value(), std::cout,
      [&](const harness::sweep::SweepResult& so_far, const harness::sweep::PointRun* point) {
        const json section = harness::sweep::sweep_section(so_far, sweep.value());
        if (!started) {
          started = true;
          return report.start(section);
        }
        return report.add_point(
            section, section.at("points").at(static_cast<size_t>(point - so_far.runs.data())));
      });
  if (!result.ok()) {
    // A clean run that did not pass, or reached nothing, is the user's to fix: a usage error.
    std::cerr << "faultline sut sweep: " << result.error().describe_with_hint() << "\n";
    // As a SUT scenario's role (a sweep block), its outcome says why: sut.json, as a role's.
    const json outcome = {{"verdict", "error"},
                          {"seconds", 0},
                          {"faults_applied", 0},
                          {"evidence", result.error().describe()}};
    if (auto written =
            reports::write_file_atomically(options.report_dir + "/sut.json", outcome.dump(2));
        !written.ok())
      std::cerr << "faultline sut sweep: " << written.error().describe() << "\n";
    const bool users = result.error().code == ErrorCode::kInvalidArgument;
    return options.metrics_options.finish("sut sweep", metrics->get(),
                                          users ? harness::kExitUsage : harness::kExitHarnessError);
  }
  json section = harness::sweep::sweep_section(result.value(), sweep.value());
  if (!baseline->is_null()) section["changes"] = harness::sweep::changes_since(*baseline, section);
  if (auto finished = report.finish(section); !finished.ok()) {
    std::cerr << "faultline sut sweep: " << finished.error().describe_with_hint() << "\n";
    return options.metrics_options.finish("sut sweep", metrics->get(), harness::kExitHarnessError);
  }
  std::cout << "faultline sut sweep: " << section.value("score_line", "") << " in "
            << static_cast<int>(result->seconds) << " s\n  report: " << options.report_dir
            << "/report.json\n";
  if (harness::stop_requested()) {
    std::cerr << "faultline sut sweep: " << result->stopped << "\n";
    return options.metrics_options.finish("sut sweep", metrics->get(), harness::kExitHarnessError);
  }
  const int code = harness::sweep::sweep_exit_code(section);
  if (code == harness::kExitIncomplete) {
    std::cerr << "faultline sut sweep: incomplete, " << harness::sweep::coverage_of(section) << ": "
              << result->stopped << " (exit 4; --partial-ok takes a partial sweep as done)\n";
  }
  return options.metrics_options.finish("sut sweep", metrics->get(), code);
}

}  // namespace

void add_sut_sweep_command(CLI::App& sut, CommandAction& run) {
  auto options = std::make_shared<SutSweepOptions>();
  CLI::App* command = sut.add_subcommand(
      "sweep", "Every fault family at every call site of a program: one run a point, one matrix");
  command
      ->add_option("--points", options->points,
                   "Occurrences of each site: first,middle,last or all")
      ->capture_default_str();
  command->add_option("--seed", options->seed, "Which middle occurrence")
      ->capture_default_str()
      ->check(whole_number());
  command->add_option("--profile", options->profiles,
                      "Target NICs (hns_roce-hip09,mlx5): a point per limit the program exceeds");
  command
      ->add_option("--jobs", options->jobs,
                   "Points run side by side ({run} in the command "
                   "gives each its own folder)")
      ->capture_default_str()
      ->check(count_between(1, 64));
  command->add_option("--budget", options->budget, "No point starts after this time: 6m, 360s");
  command->add_option("--max-points", options->max_points, "At most this many points (0: all)")
      ->check(count_between(0, 10000000));
  command
      ->add_option("--deadline", options->deadline_seconds,
                   "Seconds a point may run (default: 3 clean runs and 5 s)")
      ->check(seconds_up_to(86400));
  command
      ->add_option("--allow", options->allow,
                   "Verdicts that fail no point, known in this stack: hang,undetected,...")
      ->delimiter(',');
  command->add_option("--with", options->with,
                      "A standing fault under the clean run and every point, not judged: "
                      "kind=inline,mode=off (a program that cannot pass without it)");
  command->add_option("--ok", options->checker.ok, "Regex the output of a correct run matches");
  command->add_option("--wrong", options->checker.wrong, "Regex the output of wrong data matches");
  command->add_option("--error", options->checker.error, "Regex of the line an error prints");
  command
      ->add_option("--report-dir", options->report_dir,
                   "report.json, junit.xml, summary.md; clean/ and points/N/ of each run")
      ->check(report_dir())
      ->capture_default_str();
  command->add_option("--baseline", options->baseline,
                      "An earlier sweep's report.json: which points changed verdict");
  command->add_option("--shard", options->shard, "Only the points of shard I of N: I/N")
      ->capture_default_str();
  command->add_option("--collect", options->collect,
                      "Report folders of a sweep's shards, merged into --report-dir");
  command->add_flag("--partial-ok", options->partial_ok,
                    "Points the budget left unrun fail nothing (exit 0, not 4)");
  options->metrics_options.add_to(command, true);
  command->footer(
      "Examples:\n"
      "  faultline sut sweep --budget 6m --ok 'allreduce ok' -- sh -c 'rank0 & rank1; wait'\n"
      "  faultline sut sweep --shard 2/3 --report-dir shard2 -- ./app\n"
      "  faultline sut sweep --collect shard1 shard2 shard3 --report-dir all\n"
      "  faultline sut exec --point ID -- ./app     (one point again, by its id)\n"
      "A clean run under `observe` maps every post and poll site; each family that applies is\n"
      "tried at a site's first, a middle and its last occurrence. Exit codes: 0 every point\n"
      "detected, masked or allowed (--allow); 1 one was not; 2 a usage error or a clean run\n"
      "that did not pass; 3 the harness could not run it, or SIGTERM, SIGINT or SIGHUP stopped\n"
      "it (the points running then are stopped, the report written); 4 the budget left points\n"
      "unrun (each is a skipped testcase in junit.xml; --partial-ok: 0).");
  command->callback([options, &run] {
    options->command = program_command_line();
    run = [options] { return run_sut_sweep(*options); };
  });
}

}  // namespace faultline::cli
