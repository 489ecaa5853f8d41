#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::harness {

/// One task of a Slurm job step, as srun describes it in the environment.
struct SlurmTask {
  uint64_t job_id = 0;
  size_t rank = 0;       ///< SLURM_PROCID
  size_t tasks = 0;      ///< SLURM_NTASKS
  size_t nodes = 0;      ///< SLURM_NNODES (or SLURM_JOB_NUM_NODES)
  size_t local_id = 0;   ///< SLURM_LOCALID: the task's index on its node
  std::string nodelist;  ///< SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST ("node[01-16]")
  /// The first port of SLURM_STEP_RESV_PORTS ("12000-12003"), which `srun --resv-ports` sets on
  /// a cluster that reserves ports for job steps (MpiParams=ports=); 0 without.
  uint16_t reserved_port = 0;
};

/// The task from `lookup` (getenv by default); an error names the variable that is missing or
/// not a number, and says to run under srun.
Result<SlurmTask> slurm_task_from_environment(
    const std::function<const char*(const char*)>& lookup = nullptr);

/// What a `faultline slurm` run asks for: the coordinator's suite options, the agents' target.
struct SlurmSettings {
  std::string token_file;
  /// 0: the step's first reserved port (srun --resv-ports), else 20000 + job id mod 20000
  /// (jobs sharing a node).
  uint16_t port = 0;
  std::vector<std::string> coordinator;  ///< options for `faultline coordinator`
  std::string transport;                 ///< agents' --transport ("" = default)
  std::string provider;
  std::vector<std::string> devices;  ///< one agent per device on each node: LOCALID picks one
  std::string host;                  ///< this node's host name, for the agent's name
};

/// The command lines (without the binary) of one task: rank 0 runs the coordinator and, like
/// every other rank, an agent; the agents join the first node of the node list (`head`).
struct SlurmCommands {
  std::vector<std::string> coordinator;  ///< empty except on rank 0
  std::vector<std::string> agent;
};
Result<SlurmCommands> slurm_commands(const SlurmTask& task, const SlurmSettings& settings,
                                     const std::string& head);

}  // namespace faultline::harness
