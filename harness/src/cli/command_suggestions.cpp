#include "command_suggestions.hpp"

#include <iostream>
#include <string>
#include <vector>

#include "faultline/core/closest_names.hpp"
#include "faultline/harness/base/exit_codes.hpp"

namespace faultline::cli {

namespace {

// "faultline bench": how the command is typed.
std::string command_path(const CLI::App* command) {
  std::string path;
  for (; command != nullptr; command = command->get_parent())
    path = command->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

// The command the line chose, as deep as its words go.
CLI::App* chosen_command(CLI::App& app) {
  CLI::App* at = &app;
  for (auto parsed = at->get_subcommands(); !parsed.empty(); parsed = at->get_subcommands())
    at = parsed.front();
  return at;
}

// Every long option `command` takes ("--agents"), its parents' included.
std::vector<std::string> long_options(const CLI::App* command) {
  std::vector<std::string> names;
  for (; command != nullptr; command = command->get_parent())
    for (const CLI::Option* option : command->get_options())
      for (const auto& name : option->get_lnames()) names.push_back("--" + name);
  return names;
}

}  // namespace

std::optional<int> refuse_unknown_command(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  for (int i = 1; i < argc && argv[i][0] != '-' && at->get_require_subcommand_min() > 0; ++i) {
    const std::string word = argv[i];
    std::vector<std::string> commands;
    CLI::App* next = nullptr;
    for (CLI::App* command : at->get_subcommands({})) {
      if (command->check_name(word)) next = command;
      commands.push_back(command->get_name());
    }
    if (next != nullptr) {
      at = next;
      continue;
    }
    const std::string suggestion = did_you_mean(closest_names(word, commands));
    std::cerr << command_path(at) << ": unknown command '" << word << "'"
              << (suggestion.empty() ? "" : "; " + suggestion) << " (" << command_path(at)
              << " --help lists them)\n";
    return harness::kExitUsage;
  }
  return std::nullopt;
}

bool suggest_options(CLI::App& app, int argc, char** argv) {
  const CLI::App* command = chosen_command(app);
  const std::vector<std::string> known = long_options(command);
  bool said = false;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;  // the rest is a program's
    if (!word.starts_with("--")) continue;
    const std::string name = word.substr(0, word.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    const std::string suggestion = did_you_mean(closest_names(name, known));
    std::cerr << command_path(command) << ": unknown option '" << name << "'"
              << (suggestion.empty() ? "" : "; " + suggestion) << " (" << command_path(command)
              << " --help lists them)\n";
    said = true;
  }
  return said;
}

void say_refused(CLI::App& app, const CLI::ParseError& error) {
  const CLI::App* command = chosen_command(app);
  std::cerr << command_path(command) << ": " << error.what() << " (" << command_path(command)
            << " --help)\n";
}

}  // namespace faultline::cli
