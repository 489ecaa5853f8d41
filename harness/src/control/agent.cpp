#include "faultline/harness/control/agent.hpp"
#include "faultline/reports/metrics.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "agent_programs.hpp"
#include "faultline/harness/base/event_queue.hpp"
#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/base/metrics_plan.hpp"
#include "faultline/harness/base/net_address.hpp"
#include "faultline/harness/control/agent_faults.hpp"
#include "faultline/harness/control/agent_join.hpp"
#include "faultline/harness/control/channel.hpp"
#include "faultline/harness/control/messages.hpp"
#include "oom_kills.hpp"
#include "role_log.hpp"

namespace faultline::harness {

namespace {

using namespace std::chrono_literals;

std::string signal_name(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  return abbreviation != nullptr ? "SIG" + std::string(abbreviation)
                                 : "signal " + std::to_string(signal);
}

enum class Source { kCoordinator, kChild, kProgram };
struct Event {
  Source source;
  Result<nlohmann::json> message;  ///< kProgram: {"role": the role whose process ended}
  uint64_t run_id = 0;  ///< for child events: which child, so a late event of an old one is dropped
};

// Reads a channel until it fails, pushing every message (and the final error) as events, each
// with the run `run_id` holds when it arrives (a spare child gets its run later; none: 0).
// `silence`: how long the peer may say nothing before the reader takes it for gone.
std::thread start_reader(control::Channel& channel, Source source, EventQueue<Event>& events,
                         const std::atomic<uint64_t>* run_id = nullptr,
                         std::chrono::milliseconds silence = 24h) {
  return std::thread([&channel, source, &events, run_id, silence] {
    for (;;) {
      auto message = channel.receive(silence);
      const bool failed = !message.ok();
      events.push({source, std::move(message), run_id != nullptr ? run_id->load() : 0});
      if (failed) return;
    }
  });
}

// One scenario child: its process, its socket and the reader of that socket. A spare (run 0)
// is started ahead of its scenario, so the scenario does not wait for the binary to load
// (libfabric's dependencies sleep in their constructors).
struct Child {
  pid_t pid = -1;
  std::atomic<uint64_t> run_id{0};
  std::string last_step;
  bool reported = false;
  OomKillCounts oom_kills_before;  ///< to tell a kill by the kernel's OOM killer from others
  std::unique_ptr<control::Channel> channel;
  std::thread reader;
};

// This process's nice value, when a child started at the lowest priority may take it back
// (root, or RLIMIT_NICE allows it); nullopt otherwise.
std::optional<int> priority_a_spare_can_restore() {
  errno = 0;
  const int nice_value = getpriority(PRIO_PROCESS, 0);
  if (errno != 0) return std::nullopt;
  rlimit limit{};
  const bool allowed = geteuid() == 0 || (getrlimit(RLIMIT_NICE, &limit) == 0 &&
                                          limit.rlim_cur >= static_cast<rlim_t>(20 - nice_value));
  return allowed ? std::optional(nice_value) : std::nullopt;
}

// A scenario child. A spare (`ahead`) loads at the lowest priority, where it can take its
// priority back once its scenario comes, so its loading does not slow a scenario under way.
Result<std::unique_ptr<Child>> spawn_child(const AgentOptions& options, EventQueue<Event>& events,
                                           bool ahead = false) {
  static const std::optional<int> restorable = priority_a_spare_can_restore();
  const std::string priority = ahead && restorable ? std::to_string(*restorable) : "";
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return errno_error("socketpair", errno, "for a scenario child");
  }
  const pid_t agent = getpid();
  const OomKillCounts oom_kills_before = read_oom_kill_counts();
  const pid_t pid = fork();
  if (pid < 0) return errno_error("fork", errno, "a scenario child");
  if (pid == 0) {
    // The child dies with its agent (a SIGKILLed agent cannot kill it itself).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != agent) _exit(127);
    // The code under test, not the harness, is what the kernel's OOM killer takes first.
    if (const int adjust = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC); adjust >= 0) {
      (void)!write(adjust, "500", 3);
      close(adjust);
    }
    // The child end becomes fd 3 and survives exec; everything else is close-on-exec.
    dup2(fds[1], 3);
    if (priority.empty()) {
      execl(options.executable.c_str(), "faultline", "scenario-child", "--fd", "3", nullptr);
    } else {
      setpriority(PRIO_PROCESS, 0, 19);
      execl(options.executable.c_str(), "faultline", "scenario-child", "--fd", "3", "--priority",
            priority.c_str(), nullptr);
    }
    _exit(127);
  }
  ::close(fds[1]);
  auto child = std::make_unique<Child>();
  child->pid = pid;
  child->oom_kills_before = oom_kills_before;
  child->channel =
      std::make_unique<control::Channel>(fds[0], "scenario child pid " + std::to_string(pid));
  child->reader = start_reader(*child->channel, Source::kChild, events, &child->run_id);
  return child;
}

nlohmann::json body_of(nlohmann::json message) {
  message.erase("type");
  message.erase("seq");
  message.erase("session");
  return message;
}

// libfabric's shm provider names its regions /dev/shm/PID:N:M; a process killed before it
// closed its endpoints leaves them (16 MiB each). Removes those of `pid`, once it is gone.
void remove_shm_left_by(pid_t pid) {
  const std::string prefix = std::to_string(pid) + ":";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const auto rest = name.substr(prefix.size());
    if (rest.find_first_not_of("0123456789:") != std::string::npos) continue;
    std::filesystem::remove(entry.path(), error);
  }
}

// Waits for the child to end and says how it ended, unless it reported already.
void reap_child(Child& child, control::Channel& coordinator) {
  child.channel->shutdown();
  if (child.reader.joinable()) child.reader.join();
  int status = 0;
  waitpid(child.pid, &status, 0);
  if (WIFSIGNALED(status)) remove_shm_left_by(child.pid);
  if (child.reported) return;
  nlohmann::json result = {{"run_id", child.run_id.load()},
                           {"expected", "the scenario process reports a result"}};
  const std::string last_step =
      "last step: " + (child.last_step.empty() ? std::string("(none)") : child.last_step);
  const auto out_of_memory = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL
                                 ? oom_kill_between(child.oom_kills_before, read_oom_kill_counts())
                                 : std::nullopt;
  if (out_of_memory) {
    result["verdict"] = "crashed";
    result["observed"] = "killed by the kernel's out-of-memory killer (SIGKILL)";
    result["evidence"] = *out_of_memory + "; " + last_step;
    result["hint"] =
        "the scenario needs more memory than this machine or its cgroup (a container's or a "
        "Slurm job's limit) gives the agent: lower its buffer, kv or tagged sizes, or give the "
        "agent more memory";
    result["signal"] = "SIGKILL";
  } else if (WIFSIGNALED(status)) {
    result["verdict"] = "crashed";
    result["observed"] = "killed by " + signal_name(WTERMSIG(status));
    result["evidence"] = last_step;
    result["hint"] = "the code under test crashed; rerun the scenario alone to reproduce it";
    result["signal"] = signal_name(WTERMSIG(status));
  } else {
    result["verdict"] = "error";
    result["observed"] = "the scenario process exited with code " +
                         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                         " without a result";
    result["evidence"] = last_step;
  }
  (void)coordinator.send_message("scenario_result", result);
}

// One connected, authenticated agent: what it reads from the coordinator and from its
// scenario child, one handler per message type, until the coordinator says shutdown or is
// lost.
class AgentSession {
 public:
  AgentSession(const AgentOptions& options, control::Channel& coordinator, Welcome welcome,
               reports::Metrics* metrics)
      : options_(options),
        coordinator_(coordinator),
        welcome_(std::move(welcome)),
        metrics_(metrics),
        programs_(options.programs, welcome_.agent_id,
                  [this](uint64_t run_id, const std::string& role) {
                    events_.push({Source::kProgram, nlohmann::json{{"role", role}}, run_id});
                  }) {}

  int serve() {
    std::thread coordinator_reader =
        start_reader(coordinator_, Source::kCoordinator, events_, nullptr, welcome_.silence);
    start_spare();
    std::atomic<bool> stopping{false};
    std::thread heartbeat([&] {
      while (!stopping) {
        std::this_thread::sleep_for(welcome_.heartbeat);
        if (!stopping && !coordinator_.send_message("heartbeat").ok()) return;
      }
    });
    while (running_) {
      auto event = events_.pop(std::chrono::seconds(1));
      if (!event) continue;
      if (event->source == Source::kChild) {
        on_child(*event);
      } else if (event->source == Source::kProgram) {
        (void)coordinator_.send_message(
            "program_result", programs_.finish(event->run_id, event->message->at("role")));
      } else {
        on_coordinator(*event);
      }
    }
    stopping = true;
    for (auto* child : {&child_, &spare_}) {
      if (!*child) continue;
      kill((*child)->pid, SIGKILL);
      (*child)->reported = true;
      reap_child(**child, coordinator_);
    }
    coordinator_.shutdown();
    coordinator_reader.join();
    heartbeat.join();
    return exit_code_;
  }

 private:
  void stop(int exit_code) {
    running_ = false;
    exit_code_ = exit_code;
  }

  void on_child(Event& event) {
    if (!child_ || child_->run_id.load() != event.run_id) return;
    if (!event.message.ok()) {  // the child closed its socket: it ended
      reap_child(*child_, coordinator_);
      child_.reset();
      start_spare();  // it may have ended without a result (a crash)
      return;
    }
    nlohmann::json& message = event.message.value();
    if (auto valid = control::validate_message(
            message, {"endpoint_info", "barrier", "step", "scenario_result"});
        !valid.ok()) {
      agent_log("scenario child sent a bad message, killing it: " + valid.error().describe());
      kill(child_->pid, SIGKILL);
      return;
    }
    if (message.at("type") == "step") child_->last_step = message.at("name");
    if (message.at("type") == "scenario_result") {
      child_->reported = true;
      // Kept until the coordinator's verdict comes, to count this side's traffic with it.
      if (metrics_ && message.contains("details"))
        own_details_[child_->run_id.load()] = message["details"];
    }
    const std::string type = message.at("type");
    (void)coordinator_.send_message(type, body_of(std::move(message)));
  }

  void start_spare() {
    if (spare_) return;
    if (auto spare = spawn_child(options_, events_, true); spare.ok())
      spare_ = std::move(spare).value();
  }

  void on_coordinator(Event& event) {
    if (!event.message.ok()) {
      const Error& error = event.message.error();
      agent_log("lost the coordinator: " + error.describe() +
                (error.code == ErrorCode::kTimeout
                     ? " (it sends a heartbeat every " +
                           std::to_string(welcome_.heartbeat.count()) +
                           " ms: it is stopped, frozen or cut off)"
                     : ""));
      return stop(kExitHarnessError);
    }
    nlohmann::json& message = event.message.value();
    if (auto valid = control::validate_message(
            message, {"heartbeat", "run_scenario", "abort_scenario", "run_result", "peer_info",
                      "barrier_release", "shutdown", "run_program"});
        !valid.ok()) {
      agent_log("the coordinator sent a bad message: " + valid.error().describe());
      return stop(kExitHarnessError);
    }
    const std::string type = message.at("type");
    if (type == "heartbeat") return;
    if (type == "shutdown") return stop(kExitPass);
    if (type == "run_scenario") return run_scenario(message);
    if (type == "abort_scenario") return abort_scenario(message);
    if (type == "run_result") return run_result(message);
    if (type == "run_program") {
      // This host's address on the coordinator's network: the local end of the connection.
      const std::string own = local_address(coordinator_.fd());
      auto [reply, body] = programs_.start(message, own.empty() ? "127.0.0.1" : own);
      (void)coordinator_.send_message(reply, body);
      return;
    }
    if (child_ && message.at("run_id") == child_->run_id.load()) {
      (void)child_->channel->send(message);  // peer_info, barrier_release
    }
  }

  void run_scenario(nlohmann::json& message) {
    if (child_) {
      kill(child_->pid, SIGKILL);
      reap_child(*child_, coordinator_);
    }
    if (!options_.fault_file.empty()) {
      // Read now, so a fault put in or taken out shows from the next scenario on.
      auto faults = read_agent_faults(options_.fault_file);
      if (!faults.ok()) {
        agent_log(faults.error().describe());
        (void)coordinator_.send_message("scenario_result", {{"run_id", message.at("run_id")},
                                                            {"verdict", "error"},
                                                            {"observed", faults.error().describe()},
                                                            {"hint", faults.error().hint}});
        return;
      }
      if (!faults->empty()) message["params"]["agent_faults"] = std::move(faults).value();
    }
    auto spawned = take_child(message.at("run_id"));
    if (!spawned.ok()) {
      (void)coordinator_.send_message("scenario_result",
                                      {{"run_id", message.at("run_id")},
                                       {"verdict", "error"},
                                       {"evidence", spawned.error().describe()}});
      return;
    }
    child_ = std::move(spawned).value();
    message["target"] = {{"transport", options_.target.transport},
                         {"provider", options_.target.provider},
                         {"device", options_.target.device}};
    (void)child_->channel->send(message);
    start_spare();  // the next scenario's process loads, at low priority, while this one runs
  }

  // The spare, given run `run_id`, while it still waits for its scenario; else a new child.
  Result<std::unique_ptr<Child>> take_child(uint64_t run_id) {
    std::unique_ptr<Child> child = std::move(spare_);
    if (child && waitpid(child->pid, nullptr, WNOHANG) != 0) {
      child->reported = true;  // it ended before it had a scenario: nothing to say
      child->channel->shutdown();
      if (child->reader.joinable()) child->reader.join();
      child.reset();
    }
    if (!child) {
      auto spawned = spawn_child(options_, events_);
      if (!spawned.ok()) return spawned;
      child = std::move(spawned).value();
    }
    child->run_id = run_id;
    child->oom_kills_before = read_oom_kill_counts();
    return child;
  }

  void abort_scenario(const nlohmann::json& message) {
    programs_.stop_run(message.at("run_id"));
    if (child_ && message.at("run_id") == child_->run_id.load()) kill(child_->pid, SIGKILL);
  }

  // The run's verdict as the coordinator decided it, with what this side reported, for this
  // agent's metrics.
  void run_result(nlohmann::json& message) {
    if (!metrics_) return;
    const std::string provider = options_.target.provider;
    const uint64_t run_id = message.at("run_id");
    if (auto own = own_details_.find(run_id); own != own_details_.end()) {
      message["sides"] = {{welcome_.agent_id, {{"details", std::move(own->second)}}}};
      own_details_.erase(own);
    }
    metrics_->count_scenario(message, message.at("suite"),
                             options_.target.transport + (provider.empty() ? "" : "/" + provider),
                             options_.target.device);
  }

  const AgentOptions& options_;
  control::Channel& coordinator_;
  Welcome welcome_;
  reports::Metrics* metrics_;
  EventQueue<Event> events_;
  std::unique_ptr<Child> child_;
  std::unique_ptr<Child> spare_;                    // started ahead, waiting for the next scenario
  std::map<uint64_t, nlohmann::json> own_details_;  // by run_id, until its run_result
  bool running_ = true;
  int exit_code_ = kExitPass;
  AgentPrograms programs_;  // last: its waiters push into events_ until it is gone
};

}  // namespace

int run_agent(const AgentOptions& options) {
  // Scenario children inherit it: the control.join step joins this coordinator on purpose.
  setenv(kCoordinatorEnv, options.coordinator.c_str(), 1);
  // Nor do they, or the programs they start, get the token (it is in `options` already).
  unsetenv("FAULTLINE_TOKEN");
  std::unique_ptr<reports::Metrics> metrics;
  if (!options.metrics_listen.empty()) {
    metrics = std::make_unique<reports::Metrics>(build_info());
    // Every status, fault kind and opcode at 0 from the start; scenarios as their runs end.
    metrics->start_run(metrics_plan({}));
    if (auto served = metrics->serve(options.metrics_listen); !served.ok()) {
      agent_log(served.error().describe_with_hint());
      return kExitUsage;
    }
  }
  const std::string name = options.name.empty() ? agent_name_from_host(host_name()) : options.name;
  int exit_code = kExitPass;
  const HostFacts facts = gather_host_facts(options);
  for (auto backoff = 500ms;; backoff = std::min<std::chrono::milliseconds>(2 * backoff, 5s)) {
    auto joined = join_coordinator(options, facts);
    if (!joined.ok()) {
      agent_log(joined.error().describe_with_hint());
      const ErrorCode code = joined.error().code;
      const bool wrong_token = joined.error().message.find("token") != std::string::npos;
      if (options.reconnect && !wrong_token) {
        agent_log("trying to join again in " + std::to_string(backoff.count()) +
                  " ms (--reconnect)");
        std::this_thread::sleep_for(backoff);
        continue;
      }
      return code == ErrorCode::kInvalidArgument || code == ErrorCode::kIoError ? kExitUsage
                                                                                : kExitHarnessError;
    }
    backoff = 500ms;
    control::Channel& coordinator = *joined->channel;
    AgentOptions session_options = options;
    session_options.target = joined->target;
    if (metrics) metrics->set_agent_up(name, true);
    exit_code =
        AgentSession(session_options, coordinator, std::move(joined->welcome), metrics.get())
            .serve();
    if (metrics) metrics->set_agent_up(name, false);
    // A shutdown ends it; a lost coordinator (a monitor restarting) is joined again.
    if (!options.reconnect || exit_code == kExitPass) break;
    agent_log("rejoining the coordinator (--reconnect)");
  }
  if (metrics) std::this_thread::sleep_for(options.metrics_linger);
  return exit_code;
}

}  // namespace faultline::harness
