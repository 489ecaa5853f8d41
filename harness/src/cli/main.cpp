#include <CLI/CLI.hpp>

#include <csignal>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "faultline/core/closest_names.hpp"
#include "faultline/harness/base/exit_codes.hpp"
#include "options/commands.hpp"

namespace {

// A first word that is no command: say so, with the closest commands, instead of CLI11's
// "A subcommand is required". Nullopt when the word is a command (or an option).
std::optional<int> refuse_unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string word = argv[1];
  std::vector<std::string> commands;
  for (const CLI::App* command : app.get_subcommands({})) {
    if (command->check_name(word)) return std::nullopt;
    commands.push_back(command->get_name());
  }
  const std::string suggestion = faultline::did_you_mean(faultline::closest_names(word, commands));
  std::cerr << "faultline: unknown command '" << word << "'"
            << (suggestion.empty() ? "" : "; " + suggestion) << " (faultline --help lists them)\n";
  return faultline::harness::kExitUsage;
}

int run_cli(int argc, char** argv) {
  using namespace faultline;
  CLI::App app{"faultline: RDMA fault diagnosis and protocol conformance", "faultline"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(FAULTLINE_VERSION));
  app.footer(
      "Examples:\n  faultline run\n  faultline run --suite faults --provider shm\n"
      "  faultline list\n  faultline devices --json");

  cli::CommandAction run;
  cli::add_control_commands(app, run);
  cli::add_devices_command(app, run);
  cli::add_scenario_commands(app, run);
  cli::add_report_command(app, run);
  cli::add_diagnose_command(app, run);
  cli::add_bench_command(app, run);
  cli::add_sut_command(app, run);
  cli::add_port_check_command(app, run);
  cli::add_slurm_command(app, run);
  cli::add_monitor_command(app, run);

  if (auto refused = refuse_unknown_command(app, argc, argv)) return *refused;
  try {
    app.parse(cli::take_program_command(argc, argv), argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return harness::kExitUsage;
  }
  return run();
}

// A crash of a faultline process is judged by its signal (a scenario child that aborts or
// segfaults is `crashed` with it): the default actions, also in a sanitizer build, whose own
// SEGV handler would turn the crash into a report and exit 1. (libfabric's libpsm2 takes them
// too, when it is loaded: transports/src/ofi/libfabric_api.cpp puts them back.)
void default_crash_actions() {
  for (int signal_number : {SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT, SIGTERM})
    std::signal(signal_number, SIG_DFL);
}

}  // namespace

int main(int argc, char** argv) {
  default_crash_actions();
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "faultline: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "faultline: internal error: unknown exception\n";
  }
  return faultline::harness::kExitHarnessError;
}
