#include "faultline/harness/sut/sut_role.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "faultline/harness/sut/sut_run.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/owned_directory.hpp"

extern char** environ;

namespace faultline::harness::sut {

using nlohmann::json;

RoleLaunch role_launch(const SutScenario& scenario, const SutRole& role, const Placeholders& values,
                       std::string faultline_binary, std::string dir) {
  return {std::move(faultline_binary),
          std::move(dir),
          expand(role.command, values),
          role.faults,
          scenario.deadline_seconds,
          role.name == scenario.judged ? scenario.checker : Checker{},
          scenario.sweep};
}

Result<pid_t> start_role(const RoleLaunch& launch) {
  FAULTLINE_RETURN_IF_ERROR(reports::make_owned_directory(launch.dir));
  std::vector<std::string> args = {launch.faultline_binary, "sut", launch.sweep ? "sweep" : "exec",
                                   "--report-dir", launch.dir};
  if (launch.sweep) {
    args.insert(args.end(), launch.sweep->begin(), launch.sweep->end());
  } else {
    const std::string plan = launch.dir + "/plan.json";
    if (auto written =
            reports::write_file_atomically(plan, json({{"faults", launch.faults}}).dump());
        !written.ok())
      return std::move(written).take_error();
    args.insert(args.end(),
                {"--plan", plan, "--deadline", std::to_string(launch.deadline_seconds)});
  }
  for (auto [flag, pattern] :
       {std::pair{"--ok", &launch.checker.ok}, std::pair{"--wrong", &launch.checker.wrong},
        std::pair{"--error", &launch.checker.error}}) {
    if (!pattern->empty()) args.insert(args.end(), {flag, *pattern});
  }
  args.emplace_back("--");
  args.insert(args.end(), launch.command.begin(), launch.command.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& argument : args) argv.push_back(argument.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = launch.dir + "/sut-exec.log";
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int spawned =
      posix_spawn(&pid, launch.faultline_binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return errno_error("posix_spawn", spawned,
                       launch.faultline_binary + " sut " + args[2] + " in " + launch.dir);
  }
  return pid;
}

json read_sut_json(const std::string& dir) {
  std::ifstream file(dir + "/sut.json");
  return file ? json::parse(file, nullptr, false) : json();
}

json read_role_summary(const std::string& dir) { return role_summary(read_sut_json(dir), dir); }

Placeholders local_placeholders(const std::string& needs, const std::string& faultline_binary,
                                std::string port, std::string address) {
  Placeholders values;
  values.port = std::move(port);
  values.address = std::move(address);
  values.bin = std::filesystem::path(faultline_binary).parent_path().string();
  if (needs == "verbs") {
    values.device = verbs_device();
    if (!values.device.empty()) values.gid = ipv4_gid_index(values.device);
  }
  return values;
}

}  // namespace faultline::harness::sut
