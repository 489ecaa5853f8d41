#pragma once

// "Did you mean" for the words of a command line CLI11 would refuse without one: a mistyped
// command at any depth ("bench pingpnog") and a mistyped option ("run --agent 4").

#include <CLI/CLI.hpp>
#include <optional>

namespace faultline::cli {

/// When a word where a command must be is none of them, says so on stderr with the closest
/// and returns the exit code; nullopt when every command word names one.
std::optional<int> refuse_unknown_command(CLI::App& app, int argc, char** argv);

/// After CLI11 refused arguments it did not expect: names each unknown option with the
/// closest options of the command it was given to. Returns whether it said anything.
bool suggest_options(CLI::App& app, int argc, char** argv);

/// Any other refused command line, named by the command it was given to ("faultline run:
/// --report-dir: cannot create ...").
void say_refused(CLI::App& app, const CLI::ParseError& error);

}  // namespace faultline::cli
