#include "faultline/harness/control/slurm_launch.hpp"

#include <catch2/catch.hpp>
#include <map>

using faultline::harness::slurm_commands;
using faultline::harness::slurm_task_from_environment;
using faultline::harness::SlurmSettings;
using faultline::harness::SlurmTask;

namespace {

auto environment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> const char* {
    auto found = values.find(name);
    return found == values.end() ? nullptr : found->second.c_str();
  };
}

std::map<std::string, std::string> step(size_t rank) {
  return {{"SLURM_JOB_ID", "4711"},   {"SLURM_PROCID", std::to_string(rank)},
          {"SLURM_NTASKS", "8"},      {"SLURM_LOCALID", std::to_string(rank % 2)},
          {"SLURM_NNODES", "4"},      {"SLURM_STEP_NODELIST", "node[01-04]"},
          {"SLURM_JOB_NODELIST", "x"}};
}

}  // namespace

TEST_CASE("slurm: a task reads its place from srun's environment", "[unit]") {
  auto task = slurm_task_from_environment(environment(step(5)));
  REQUIRE(task.ok());
  CHECK(task->job_id == 4711);
  CHECK(task->rank == 5);
  CHECK(task->tasks == 8);
  CHECK(task->local_id == 1);
  CHECK(task->nodes == 4);
  CHECK(task->nodelist == "node[01-04]");  // the step's, before the job's
}

TEST_CASE("slurm: outside srun, or with a broken variable, the error names it", "[unit]") {
  auto none = slurm_task_from_environment(environment({}));
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.error().message, Catch::Contains("SLURM_JOB_ID is not set"));
  CHECK_THAT(none.error().hint, Catch::Contains("srun faultline slurm"));
  auto bad = step(0);
  bad["SLURM_PROCID"] = "zero";
  CHECK_THAT(slurm_task_from_environment(environment(bad)).error().message,
             Catch::Contains("SLURM_PROCID='zero' is not a whole number"));
  auto alone = step(0);
  alone["SLURM_NTASKS"] = "1";
  CHECK_THAT(slurm_task_from_environment(environment(alone)).error().message,
             Catch::Contains("at least 2 tasks"));
  // 2^64 - 1 agents to wait for, or a count that wraps, is no count.
  for (const char* huge : {"18446744073709551615", "99999999999999999999", "1000001", "-2"}) {
    auto overflow = step(0);
    overflow["SLURM_NTASKS"] = huge;
    CHECK_THAT(slurm_task_from_environment(environment(overflow)).error().message,
               Catch::Contains("is not a whole number from 0 to 1000000"));
  }
}

TEST_CASE("slurm: rank 0 coordinates and every rank is an agent, one per device", "[unit]") {
  SlurmSettings settings;
  settings.token_file = "/home/u/.faultline/token";
  settings.coordinator = {"--suite", "links", "--pairs", "rail"};
  settings.transport = "verbs";
  settings.devices = {"mlx5_0", "mlx5_1"};
  settings.host = "node01";
  auto first =
      slurm_commands(slurm_task_from_environment(environment(step(0))).value(), settings, "node01");
  REQUIRE(first.ok());
  CHECK(first->coordinator == std::vector<std::string>{"coordinator", "--token-file",
                                                       settings.token_file, "--listen",
                                                       "0.0.0.0:24711", "--agents", "8", "--suite",
                                                       "links", "--pairs", "rail"});
  CHECK(first->agent == std::vector<std::string>{
                            "agent", "--token-file", settings.token_file, "--coordinator",
                            "node01:24711", "--connect-timeout", "120", "--transport", "verbs",
                            "--device", "mlx5_0", "--rail", "mlx5_0", "--name", "node01:mlx5_0"});
  settings.host = "node03";
  auto later =
      slurm_commands(slurm_task_from_environment(environment(step(5))).value(), settings, "node01");
  REQUIRE(later.ok());
  CHECK(later->coordinator.empty());
  CHECK(later->agent.at(10) == "mlx5_1");  // LOCALID 1
  CHECK(later->agent.back() == "node03:mlx5_1");
  settings.token_file.clear();
  CHECK_FALSE(slurm_commands(SlurmTask{}, settings, "node01").ok());
}

TEST_CASE("slurm: the coordinator listens on the step's first port srun --resv-ports reserved",
          "[unit]") {
  SlurmSettings settings;
  settings.token_file = "/home/u/.faultline/token";
  settings.host = "node01";
  for (const std::string ports : {"12000-12003", "12000", "12000,12007"}) {
    auto reserved = step(0);
    reserved["SLURM_STEP_RESV_PORTS"] = ports;
    const auto task = slurm_task_from_environment(environment(reserved));
    REQUIRE(task.ok());
    CHECK(task->reserved_port == 12000);
    const auto commands = slurm_commands(task.value(), settings, "node01");
    REQUIRE(commands.ok());
    CHECK(commands->coordinator.at(4) == "0.0.0.0:12000");
    CHECK(commands->agent.at(4) == "node01:12000");
  }
  // --port still wins; a value that begins with no port is named.
  auto reserved = step(0);
  reserved["SLURM_STEP_RESV_PORTS"] = "12000-12003";
  settings.port = 7400;
  CHECK(
      slurm_commands(slurm_task_from_environment(environment(reserved)).value(), settings, "node01")
          ->coordinator.at(4) == "0.0.0.0:7400");
  for (const std::string bad : {"ports", "70000-70001", "0"}) {
    reserved["SLURM_STEP_RESV_PORTS"] = bad;
    CHECK_THAT(slurm_task_from_environment(environment(reserved)).error().message,
               Catch::Contains("SLURM_STEP_RESV_PORTS='" + bad + "' does not begin with a port"));
  }
}
