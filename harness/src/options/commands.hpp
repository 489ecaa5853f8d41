#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace faultline::cli {

/// Each subcommand registers itself on the app and sets `run` to the action to take when it
/// was chosen. The action returns the process exit code (faultline::harness::ExitCode).
using CommandAction = std::function<int()>;

void add_devices_command(CLI::App& app, CommandAction& run);
void add_control_commands(CLI::App& app, CommandAction& run);
void add_scenario_commands(CLI::App& app, CommandAction& run);
void add_report_command(CLI::App& app, CommandAction& run);
void add_diagnose_command(CLI::App& app, CommandAction& run);
void add_bench_command(CLI::App& app, CommandAction& run);
void add_sut_command(CLI::App& app, CommandAction& run);
/// `sut run` and `sut sweep`, under the `sut` command.
void add_sut_run_command(CLI::App& sut, CommandAction& run);
void add_sut_sweep_command(CLI::App& sut, CommandAction& run);
void add_port_check_command(CLI::App& app, CommandAction& run);
void add_slurm_command(CLI::App& app, CommandAction& run);
void add_monitor_command(CLI::App& app, CommandAction& run);
/// `faultline sut exec|sweep ... -- COMMAND`, `faultline port-check ... -- COMMAND` and
/// `faultline slurm ... -- COORDINATOR OPTIONS`: keeps what follows `--` (program_command_line) and
/// returns the argument count CLI11 is to parse (those before `--`).
int take_program_command(int argc, char** argv);
const std::vector<std::string>& program_command_line();

}  // namespace faultline::cli
