#include "faultline/harness/sut/sut_role.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "faultline/harness/base/strict_json.hpp"
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
          role.with,
          scenario.deadline_seconds,
          role.name == scenario.judged ? scenario.checker : Checker{},
          role.name == scenario.judged,
          role.name == scenario.judged ? scenario.sweep : std::nullopt};
}

Result<pid_t> start_role(const RoleLaunch& launch) {
  FAULTLINE_RETURN_IF_ERROR(reports::make_owned_directory(launch.dir));
  std::vector<std::string> args = {launch.faultline_binary, "sut", launch.sweep ? "sweep" : "exec",
                                   "--report-dir", launch.dir};
  if (launch.sweep) {
    args.insert(args.end(), launch.sweep->begin(), launch.sweep->end());
  } else {
    const std::string plan = launch.dir + "/plan.json";
    if (auto written = reports::write_file_atomically(
            plan, json({{"faults", launch.faults}, {"standing", launch.with}}).dump());
        !written.ok())
      return std::move(written).take_error();
    args.insert(args.end(),
                {"--plan", plan, "--deadline", std::to_string(launch.deadline_seconds)});
    if (launch.quiet_seconds > 0)
      args.insert(args.end(), {"--quiet-limit", std::to_string(launch.quiet_seconds)});
    if (!launch.judged) args.emplace_back("--peer");
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
  const std::string log = launch.dir + "/sut-exec.log";
  const int output =
      ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (output < 0) return errno_error("open", errno, log);
  // The child's exec errno comes back through a pipe that a successful exec closes.
  int exec_error[2];
  if (::pipe2(exec_error, O_CLOEXEC) != 0) {
    const int saved = errno;
    ::close(output);
    return errno_error("pipe2", saved, "for " + launch.faultline_binary);
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec. The role ends with the sweep or agent that
    // started it (SIGTERM: it stops its program and writes its sut.json), never left running.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(output, STDOUT_FILENO);
    ::dup2(output, STDERR_FILENO);
    ::execve(launch.faultline_binary.c_str(), argv.data(), environ);
    const int failed = errno;
    (void)!::write(exec_error[1], &failed, sizeof failed);
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(output);
  ::close(exec_error[1]);
  int exec_errno = 0;
  const bool exec_failed =
      pid > 0 && ::read(exec_error[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  ::close(exec_error[0]);
  const std::string what = launch.faultline_binary + " sut " + args[2] + " in " + launch.dir;
  if (pid < 0) return errno_error("fork", fork_errno, what);
  if (exec_failed) {
    ::waitpid(pid, nullptr, 0);
    return errno_error("execve", exec_errno, what);
  }
  return pid;
}

json read_sut_json(const std::string& dir) {
  auto document = read_json_file(dir + "/sut.json");
  return document.ok() ? std::move(document).value() : json();
}

json read_role_summary(const std::string& dir) { return role_summary(read_sut_json(dir), dir); }

Placeholders local_placeholders(const std::string& needs, const std::string& faultline_binary,
                                std::string port, std::string address) {
  Placeholders values;
  values.port = std::move(port);
  values.address = std::move(address);
  values.bin = std::filesystem::path(faultline_binary).parent_path().string();
  if (needs == "verbs" || needs == "stepmesh-verbs") {
    values.device = verbs_device();
    if (!values.device.empty()) values.gid = ipv4_gid_index(values.device);
    if (!values.gid.empty())
      std::tie(values.device_address, values.netdev) =
          gid_address_and_netdev(values.device, values.gid);
  }
  return values;
}

std::string first_role_address(const Placeholders& here) {
  return here.device_address.empty() ? here.address : here.device_address;
}

}  // namespace faultline::harness::sut
