// faultline slurm: what each task of `srun faultline slurm ...` runs. Rank 0 runs the
// coordinator (with the options after `--`) and an agent; every other rank an agent; the
// agents join the first node of the step's node list.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/base/net_address.hpp"
#include "faultline/harness/base/process.hpp"
#include "faultline/harness/control/auth.hpp"
#include "faultline/harness/control/slurm_launch.hpp"
#include "faultline/harness/runs/local_run.hpp"
#include "options/commands.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

namespace {

// The first host of a Slurm node list ("node[01-16]" -> "node01"), as Slurm expands it.
Result<std::string> first_host(const std::string& nodelist) {
  // Host names, brackets, ranges and commas only: the list goes to a shell below.
  if (nodelist.empty() ||
      nodelist.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789.-_[],") != std::string::npos)
    return Error{ErrorCode::kInvalidArgument,
                 "the node list '" + nodelist + "' is not a Slurm host list"};
  if (nodelist.find_first_of("[,") == std::string::npos) return nodelist;
  const std::string command = "scontrol show hostnames '" + nodelist + "' 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return Error{ErrorCode::kIoError, "cannot run scontrol"};
  char line[256] = {};
  const bool read = fgets(line, sizeof line, pipe.get()) != nullptr;
  std::string host = read ? line : "";
  while (!host.empty() && (host.back() == '\n' || host.back() == ' ')) host.pop_back();
  if (pclose(pipe.release()) != 0 || host.empty())
    return Error{ErrorCode::kNotFound, "cannot expand the node list '" + nodelist +
                                           "' with scontrol show hostnames: " + host}
        .with_hint("is Slurm's scontrol on the PATH of the job?");
  return host;
}

[[noreturn]] void exec_faultline(const std::vector<std::string>& arguments) {
  const std::string binary = harness::own_executable();
  std::vector<char*> argv{const_cast<char*>(binary.c_str())};
  for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  execv(binary.c_str(), argv.data());
  std::perror("faultline slurm: execv");
  _exit(harness::kExitHarnessError);
}

}  // namespace

void add_slurm_command(CLI::App& app, CommandAction& run) {
  auto settings = std::make_shared<harness::SlurmSettings>();
  auto devices = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand(
      "slurm", "Every task of a Slurm job step: rank 0 coordinates, every rank is an agent");
  command
      ->add_option("--token-file", settings->token_file,
                   "The shared token, in a file only the job's user can read")
      ->required();
  command->add_option("--port", settings->port,
                      "Coordinator port on the first node (default: the step's first port "
                      "of srun --resv-ports, else 20000 + job id mod 20000)");
  command->add_option("--transport", settings->transport, "Transport the agents use (ofi, verbs)");
  command->add_option("--provider", settings->provider, "ofi provider the agents use");
  command->add_option("--devices", *devices,
                      "Devices, comma-separated: one agent per device on each node (srun "
                      "--ntasks-per-node = their count); each device is also the agent's rail");
  command->footer(
      "Options after -- go to the coordinator (rank 0).\nExample "
      "(examples/slurm/faultline.sbatch):\n"
      "  srun faultline slurm --token-file ~/.faultline/token --transport verbs \\\n"
      "       --devices mlx5_0,mlx5_1 -- --suite links --pairs rail --report-dir report\n");
  command->callback([&run, settings, devices] {
    run = [settings, devices] {
      settings->coordinator = program_command_line();
      for (size_t start = 0; !devices->empty() && start <= devices->size();) {
        const size_t comma = std::min(devices->find(',', start), devices->size());
        if (comma > start) settings->devices.push_back(devices->substr(start, comma - start));
        start = comma + 1;
      }
      // Every rank reads the token, held to the rule every command holds it to.
      if (auto token = harness::control::check_token_file(settings->token_file); !token.ok())
        return usage_error("slurm", token.error().describe_with_hint());
      auto task = harness::slurm_task_from_environment();
      if (!task.ok()) return usage_error("slurm", task.error().describe_with_hint());
      auto head = first_host(task->nodelist);
      if (!head.ok()) return usage_error("slurm", head.error().describe_with_hint());
      settings->host = harness::host_name();
      auto commands = harness::slurm_commands(task.value(), *settings, head.value());
      if (!commands.ok()) return usage_error("slurm", commands.error().describe());
      std::cerr << "faultline slurm: rank " << task->rank << " of " << task->tasks << " on "
                << settings->host << (task->rank == 0 ? ": coordinator and agent" : ": agent")
                << ", coordinator " << head.value() << "\n";
      if (commands->coordinator.empty()) exec_faultline(commands->agent);
      if (const pid_t agent = fork(); agent == 0) {
        exec_faultline(commands->agent);
      } else if (agent < 0) {
        std::perror("faultline slurm: fork");
        return static_cast<int>(harness::kExitHarnessError);
      }
      exec_faultline(commands->coordinator);
    };
  });
}

}  // namespace faultline::cli
