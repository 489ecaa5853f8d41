#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace faultline::cli {

/// Says "faultline COMMAND: TEXT" on stderr and returns the usage exit code: how every command
/// refuses a command line.
int usage_error(const std::string& command, const std::string& text);

/// A number of seconds above 0 and at most `most`: NaN, infinities, 0 and 1e300 are refused
/// with the range in words (CLI11's PositiveNumber prints 4.94066e-324 to 1.79769e+308).
CLI::Validator seconds_up_to(double most);

/// A whole number from 0 to 2^64 - 1 in digits: CLI11 reads "-1" into an unsigned as 2^64 - 1.
CLI::Validator whole_number();

/// A whole number in digits from `least` to `most` (no sign, no hex, no exponent).
CLI::Validator count_between(uint64_t least, uint64_t most);

/// A decimal number from `least` to `most`: NaN and the infinities are refused (CLI::Range
/// lets NaN through, since every comparison with it is false).
CLI::Validator number_between(double least, double most);

/// A --report-dir that can be made, with its parents, and written in: tried when the command
/// line is read (and what the trial made taken away), so a directory that cannot be made fails
/// before any agent or program starts.
CLI::Validator report_dir();

/// A file faultline writes where the user points (-o, --port-file, --save-profile): a new name
/// or a regular file in a folder of this user or root (reports::user_file_problem), "-" for
/// standard output; checked when the command line is read, before anything runs.
CLI::Validator user_file();

/// An agent's --name or --rail as reports hold it: 1 to 64 of A-Z a-z 0-9 . _ : @ + -.
CLI::Validator agent_label();

/// A Pushgateway's URL (reports::pushgateway_base: http or https, a host, a port and a path
/// prefix if it has them), checked when the command line is read rather than when the run is
/// over.
CLI::Validator pushgateway_url();

}  // namespace faultline::cli
