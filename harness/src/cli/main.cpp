#include <CLI/CLI.hpp>

#include <csignal>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "command_suggestions.hpp"
#include "faultline/harness/base/exit_codes.hpp"
#include "options/commands.hpp"

namespace {

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

  if (auto refused = cli::refuse_unknown_command(app, argc, argv)) return *refused;
  try {
    app.parse(cli::take_program_command(argc, argv), argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    if (!cli::suggest_options(app, argc, argv)) cli::say_refused(app, e);
    return harness::kExitUsage;
  } catch (const CLI::ParseError& e) {
    cli::say_refused(app, e);
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
