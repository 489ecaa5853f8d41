#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "commands.hpp"
#include "faultline/harness/exit_codes.hpp"
#include "faultline/transports/library_signal_handlers.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  faultline::transports::restore_default_signal_actions();
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "faultline: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "faultline: internal error: unknown exception\n";
  }
  return faultline::harness::kExitHarnessError;
}
