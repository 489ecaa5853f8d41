#include "agent_programs.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "faultline/harness/base/net_address.hpp"
#include "faultline/harness/base/port_listening.hpp"
#include "faultline/harness/base/strict_json.hpp"

namespace faultline::harness {

using nlohmann::json;

struct AgentPrograms::Program {
  uint64_t run_id = 0;
  std::string role;
  std::string dir;
  pid_t pid = -1;
  std::thread waiter;
};

namespace {

// Below the coordinator's 15 s for the first role's start, so the answer comes in time.
constexpr auto kListenBudget = std::chrono::seconds(10);

// A name from the coordinator as one path component: letters, digits, '-' and '_' (never
// ".." or a '/').
std::string path_component(const std::string& name) {
  std::string safe;
  for (char c : name.substr(0, 80))
    safe += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  return safe.empty() ? std::string("_") : safe;
}

json failed(uint64_t run_id, const std::string& role, const std::string& why) {
  return {{"run_id", run_id},
          {"role", role},
          {"summary",
           {{"verdict", "error"}, {"seconds", 0}, {"faults_applied", 0}, {"evidence", why}}}};
}

}  // namespace

AgentPrograms::AgentPrograms(std::shared_ptr<JobLauncher> launcher, std::string agent_id,
                             Ended ended)
    : launcher_(std::move(launcher)), agent_id_(std::move(agent_id)), ended_(std::move(ended)) {}

AgentPrograms::~AgentPrograms() {
  std::vector<std::unique_ptr<Program>> programs;
  {
    const std::lock_guard lock(mutex_);
    programs.swap(programs_);
  }
  for (auto& program : programs) kill(program->pid, SIGTERM);
  for (auto& program : programs)
    if (program->waiter.joinable()) program->waiter.join();
}

Result<std::string> AgentPrograms::work_dir() {
  if (!work_dir_.empty()) return work_dir_;
  // A name no other user can take ahead of this agent, a folder only this user can enter.
  std::string pattern = (std::filesystem::temp_directory_path() / "faultline-agent-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr)
    return errno_error("mkdtemp", errno, pattern + ", the agent's folder for its programs");
  work_dir_ = pattern;
  return work_dir_;
}

std::pair<std::string, json> AgentPrograms::start(const json& message,
                                                  const std::string& local_address) {
  const uint64_t run_id = message.at("run_id");
  const std::string role = message.at("role");
  if (!launcher_) return {"program_result", failed(run_id, role, agent_id_ + " runs no programs")};
  // The first role's agent chooses the port and gives its address; the others get them, typed
  // and checked: they become arguments of the role's program.
  const json& given = message.at("values");
  ProgramValues values{0, launcher_->first_role_address(message.at("body"), local_address)};
  if (!given.empty()) {
    auto checked = program_values_from(given);
    if (!checked.ok()) {
      return {"program_result",
              failed(run_id, role, "run_program refused: " + checked.error().message)};
    }
    values = std::move(checked).value();
  }
  {
    // One process a role of a run: a second run_program for it is refused at once, never
    // queued behind the first's deadline.
    const std::lock_guard lock(mutex_);
    for (const auto& program : programs_) {
      if (program->run_id == run_id && program->role == role) {
        return {"program_result", failed(run_id, role,
                                         "run_program refused: role " + role + " of run " +
                                             std::to_string(run_id) + " already runs here")};
      }
    }
  }
  auto work = work_dir();
  if (!work.ok()) return {"program_result", failed(run_id, role, work.error().describe())};
  if (values.port == 0) values.port = static_cast<uint16_t>(std::stoul(free_local_port()));
  const std::string port = std::to_string(values.port);
  const std::string dir = work.value() + "/" + std::to_string(run_id) + "-" +
                          path_component(message.at("job")) + "/" + path_component(role);
  auto pid = launcher_->start(message.at("body"), port, values.address, dir);
  if (!pid.ok()) return {"program_result", failed(run_id, role, pid.error().describe())};
  auto program = std::make_unique<Program>();
  program->run_id = run_id;
  program->role = role;
  program->dir = dir;
  program->pid = pid.value();
  program->waiter = std::thread([this, run_id, role, child = pid.value()] {
    waitpid(child, nullptr, 0);
    ended_(run_id, role);
  });
  {
    const std::lock_guard lock(mutex_);
    programs_.push_back(std::move(program));
  }
  // The roles after a listening one start when it listens: the coordinator starts them once
  // it hears this. Within its budget for the first role's start.
  if (message.at("listens").get<bool>())
    wait_until_listening(pid.value(), port, std::chrono::steady_clock::now() + kListenBudget);
  return {"program_started", {{"run_id", run_id}, {"role", role}, {"values", values.to_json()}}};
}

json AgentPrograms::finish(uint64_t run_id, const std::string& role) {
  std::unique_ptr<Program> program;
  {
    const std::lock_guard lock(mutex_);
    auto found = std::find_if(programs_.begin(), programs_.end(), [&](const auto& candidate) {
      return candidate->run_id == run_id && candidate->role == role;
    });
    if (found == programs_.end()) return failed(run_id, role, "no such role on " + agent_id_);
    program = std::move(*found);
    programs_.erase(found);
  }
  if (program->waiter.joinable()) program->waiter.join();
  json summary = launcher_->summary(program->dir);
  summary["log"] = program->dir;  // on this host: the coordinator puts the agent's name before it
  return {{"run_id", run_id}, {"role", role}, {"summary", summary}};
}

void AgentPrograms::stop_run(uint64_t run_id) {
  const std::lock_guard lock(mutex_);
  for (const auto& program : programs_)
    if (program->run_id == run_id) kill(program->pid, SIGTERM);
}

}  // namespace faultline::harness
