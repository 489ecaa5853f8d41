#include "faultline/harness/control/slurm_launch.hpp"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "faultline/harness/control/agent.hpp"

namespace faultline::harness {

namespace {

Error not_under_srun(const std::string& text) {
  return Error{ErrorCode::kInvalidArgument, text}.with_hint(
      "faultline slurm runs as every task of a job step: srun faultline slurm ... (see "
      "examples/slurm/faultline.sbatch)");
}

}  // namespace

Result<SlurmTask> slurm_task_from_environment(
    const std::function<const char*(const char*)>& lookup) {
  const auto get = [&lookup](const char* name) -> const char* {
    const char* value = lookup ? lookup(name) : std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
  };
  // A job id fits 32 bits; counts and ranks at most a million (no job step has more), and
  // 20 digits would overflow.
  const auto number = [&](const char* name, uint64_t& out, uint64_t largest = 1000000) -> Status {
    const char* text = get(name);
    if (text == nullptr) return not_under_srun(std::string(name) + " is not set");
    const std::string_view digits(text);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    if (error != std::errc() || end != digits.data() + digits.size() || out > largest) {
      return not_under_srun(std::string(name) + "='" + text + "' is not a whole number from 0 to " +
                            std::to_string(largest));
    }
    return {};
  };
  SlurmTask task;
  uint64_t rank = 0, tasks = 0, nodes = 0, local_id = 0;
  FAULTLINE_RETURN_IF_ERROR(number("SLURM_JOB_ID", task.job_id, UINT32_MAX));
  FAULTLINE_RETURN_IF_ERROR(number("SLURM_PROCID", rank));
  FAULTLINE_RETURN_IF_ERROR(number("SLURM_NTASKS", tasks));
  FAULTLINE_RETURN_IF_ERROR(number("SLURM_LOCALID", local_id));
  FAULTLINE_RETURN_IF_ERROR(
      number(get("SLURM_NNODES") ? "SLURM_NNODES" : "SLURM_JOB_NUM_NODES", nodes));
  const char* nodelist = get("SLURM_STEP_NODELIST");
  if (nodelist == nullptr) nodelist = get("SLURM_JOB_NODELIST");
  if (nodelist == nullptr)
    return not_under_srun("neither SLURM_STEP_NODELIST nor SLURM_JOB_NODELIST is set");
  if (tasks < 2)
    return not_under_srun("SLURM_NTASKS=" + std::to_string(tasks) +
                          ": a pair needs at least 2 tasks (srun -n 2 or more)");
  if (rank >= tasks)
    return not_under_srun("SLURM_PROCID=" + std::to_string(rank) +
                          " is not below SLURM_NTASKS=" + std::to_string(tasks));
  task.rank = rank;
  task.tasks = tasks;
  task.nodes = nodes;
  task.local_id = local_id;
  task.nodelist = nodelist;
  // "12000-12003" or "12000,12005": the step's ports, the same in every task; the first is
  // the coordinator's.
  if (const char* ports = get("SLURM_STEP_RESV_PORTS")) {
    const std::string_view text(ports);
    uint64_t first = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), first);
    const bool whole = end == text.data() + text.size() || *end == '-' || *end == ',';
    if (error != std::errc() || !whole || first == 0 || first > UINT16_MAX)
      return not_under_srun(std::string("SLURM_STEP_RESV_PORTS='") + ports +
                            "' does not begin with a port (12000-12003)");
    task.reserved_port = static_cast<uint16_t>(first);
  }
  return task;
}

Result<SlurmCommands> slurm_commands(const SlurmTask& task, const SlurmSettings& settings,
                                     const std::string& head) {
  if (settings.token_file.empty())
    return Error{ErrorCode::kInvalidArgument,
                 "--token-file is required: a file only the job's user can read (chmod 600)"};
  if (head.empty())
    return Error{ErrorCode::kInvalidArgument,
                 "the node list '" + task.nodelist + "' names no node"};
  const uint16_t port = settings.port != 0 ? settings.port
                        : task.reserved_port != 0
                            ? task.reserved_port
                            : static_cast<uint16_t>(20000 + task.job_id % 20000);
  SlurmCommands commands;
  if (task.rank == 0) {
    commands.coordinator = {"coordinator",
                            "--token-file",
                            settings.token_file,
                            "--listen",
                            "0.0.0.0:" + std::to_string(port),
                            "--agents",
                            std::to_string(task.tasks)};
    commands.coordinator.insert(commands.coordinator.end(), settings.coordinator.begin(),
                                settings.coordinator.end());
  }
  // Every agent is named after its node; several on one node by their NIC, else their index.
  std::string name = settings.host;
  std::vector<std::string>& agent = commands.agent;
  agent = {"agent",
           "--token-file",
           settings.token_file,
           "--coordinator",
           head + ":" + std::to_string(port),
           "--connect-timeout",
           "120"};
  if (!settings.transport.empty()) agent.insert(agent.end(), {"--transport", settings.transport});
  if (!settings.provider.empty()) agent.insert(agent.end(), {"--provider", settings.provider});
  if (!settings.devices.empty()) {
    const std::string& device = settings.devices[task.local_id % settings.devices.size()];
    agent.insert(agent.end(), {"--device", device, "--rail", device});
    if (settings.devices.size() > 1) name += ":" + device;
  } else if (task.tasks > task.nodes) {
    name += "." + std::to_string(task.local_id);
  }
  agent.insert(agent.end(), {"--name", agent_name_from_host(name)});
  return commands;
}

}  // namespace faultline::harness
