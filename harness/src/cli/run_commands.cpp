// The commands of the control plane: coordinator, agent, run, and the hidden scenario-child.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/scenario_selection.hpp"
#include "devices/agent_device.hpp"
#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/base/process.hpp"
#include "faultline/harness/control/agent.hpp"
#include "faultline/harness/control/agent_faults.hpp"
#include "faultline/harness/control/auth.hpp"
#include "faultline/harness/control/coordinator.hpp"
#include "faultline/harness/devices/device_listing.hpp"
#include "faultline/harness/runs/local_run.hpp"
#include "faultline/harness/runs/report_document.hpp"
#include "faultline/harness/runs/suite_runner.hpp"
#include "faultline/harness/runs/sut_suite.hpp"
#include "faultline/harness/scenario/scenario_child.hpp"
#include "faultline/harness/sut/sut_jobs.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/metrics.hpp"
#include "options/commands.hpp"
#include "options/coordinator_options.hpp"
#include "options/metrics_options.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

namespace {

using namespace std::chrono_literals;
using harness::kExitHarnessError;
using harness::kExitUsage;
using harness::own_executable;

struct TargetOptions {
  transports::Target target;
  void add_to(CLI::App* command) {
    command->add_option("--transport", target.transport, "Transport the agents use (ofi, verbs)")
        ->capture_default_str();
    command->add_option("--provider", target.provider, "ofi provider (tcp, shm, sockets, ...)");
    command->add_option("--device", target.device,
                        "Device (lo, eth0, shm, rxe0, ...; an agent's default is the one that "
                        "reaches its coordinator)");
  }
  // The target must exist here: an unknown transport, provider or device is a usage error
  // naming what is present.
  // None at all is one too, said before any agent starts (not an error per run).
  Status check() const {
    auto devices = harness::list_devices({target.transport, target.provider, target.device});
    if (!devices.ok()) return devices.status();
    if (!devices->empty()) return {};
    return Error{ErrorCode::kNotFound, "no " + target.transport + " devices on this host"}
        .with_hint(target.transport == "verbs"
                       ? "load an RDMA driver and check `ibv_devices` (for Soft-RoCE: modprobe "
                         "rdma_rxe; rdma link add rxe0 type rxe netdev IFACE), or run over "
                         "libfabric: --transport ofi"
                       : "check `faultline devices` and `fi_info`");
  }
};

// ---- coordinator -------------------------------------------------------------------------

struct CoordinatorCommand {
  harness::CoordinatorOptions options;
  std::string token_file;
  ScenarioSelection selection;
  std::string report_dir = "faultline-report";
  std::string port_file;
  int wait_seconds = 60;
  MetricsOptions metrics_options;

  int run() {
    auto token = harness::control::load_token(token_file);
    if (!token.ok()) return usage_error("coordinator", token.error().describe_with_hint());
    options.token = token.value();
    std::vector<harness::sut::SutScenario> programs;
    std::optional<std::vector<harness::ScenarioSpec>> resolved;
    if (selection.is_sut_suite()) {  // each role on an agent
      auto loaded = harness::sut::load_sut_scenarios({selection.sut_dir()}, "");
      if (!loaded.ok()) return usage_error("coordinator", loaded.error().describe());
      programs = std::move(loaded).value();
    } else {
      resolved = selection.resolve("coordinator");
      if (!resolved) return kExitUsage;
    }
    if (options.agents < 2) return usage_error("coordinator", "--agents must be at least 2");
    auto metrics = metrics_options.start();
    if (!metrics.ok()) return usage_error("coordinator", metrics.error().describe_with_hint());
    harness::Coordinator coordinator(options);
    if (auto listening = coordinator.listen(); !listening.ok()) {
      return usage_error("coordinator", listening.error().describe_with_hint());
    }
    if (!port_file.empty()) {
      const std::string port = std::to_string(coordinator.port()) + "\n";
      if (auto written = reports::write_user_file(port_file, port); !written.ok())
        return usage_error("coordinator", "--port-file: " + written.error().describe_with_hint());
    }
    harness::RunMetadata metadata{selection.names.empty() ? selection.suite : "",
                                  {},
                                  selection.seed_or_random(),
                                  selection.strict};
    const auto joined = coordinator.wait_for_agents(std::chrono::seconds(wait_seconds));
    metadata.target = coordinator.agents_target();  // what the agents use, not a default
    if (!joined.ok()) {
      std::cerr << "faultline coordinator: " << joined.error().describe_with_hint() << "\n";
      coordinator.shutdown_agents();
      if (!resolved) return kExitHarnessError;
      return harness::report_nothing_ran(coordinator, *resolved, report_dir, metadata,
                                         joined.error().describe());
    }
    int code = kExitHarnessError;
    if (resolved) {
      code = harness::run_suite(coordinator, *resolved, report_dir, metadata, std::cout,
                                metrics->get());
    } else {
      harness::sut::SutSuiteSettings settings{own_executable(), report_dir, "sut", metrics->get()};
      // Each scenario on the agents, under the retry rule as `sut run` runs it: StepMesh fails
      // by itself before its first push about one run in ten.
      settings.run_scenario = [&coordinator](const harness::sut::SutScenario& scenario) {
        return harness::sut::run_with_retry_rule(
            scenario,
            [&](int) {
              return Result<harness::sut::ScenarioOutcome>(harness::sut::scenario_outcome(
                  scenario, coordinator.run_programs(harness::sut::program_job(scenario))));
            },
            [](int) { return std::string("each role's `log` on its agent"); });
      };
      settings.agents = harness::ReportDocument(coordinator, {}, 0).json().at("run").at("agents");
      code = harness::sut::run_sut_suite(programs, settings, std::cout, std::cerr);
    }
    coordinator.shutdown_agents();
    return metrics_options.finish("coordinator", metrics->get(), code);
  }
};

// ---- agent -------------------------------------------------------------------------------

struct AgentCommand {
  harness::AgentOptions options;
  std::string token_file;
  std::string sut_scenarios;
  double connect_timeout_s = 10;
  TargetOptions target;
  MetricsOptions metrics_options;

  int run() {
    auto token = harness::control::load_token(token_file);
    if (!token.ok()) return usage_error("agent", token.error().describe_with_hint());
    if (auto present = target.check(); !present.ok()) {
      return usage_error("agent", present.error().describe_with_hint());
    }
    if (!options.fault_file.empty()) {
      if (auto faults = harness::read_agent_faults(options.fault_file); !faults.ok())
        return usage_error("agent", faults.error().describe_with_hint());
    }
    options.token = token.value();
    options.target = target.target;
    options.connect_budget =
        std::chrono::milliseconds(static_cast<int64_t>(connect_timeout_s * 1000));
    options.executable = own_executable();
    options.host = std::make_shared<harness::DeviceHost>();
    if (!sut_scenarios.empty()) {  // the opt-in: without it this agent runs no program
      auto scenarios = harness::sut::load_sut_scenarios({sut_scenarios}, "");
      if (!scenarios.ok()) return usage_error("agent", scenarios.error().describe());
      options.programs = std::make_shared<harness::sut::SutRoleLauncher>(
          options.executable, std::move(scenarios).value(), sut_scenarios);
    }
    options.metrics_listen = metrics_options.listen;
    options.metrics_linger = std::chrono::seconds(metrics_options.linger_seconds);
    return harness::run_agent(options);
  }
};

// ---- run ---------------------------------------------------------------------------------

struct RunCommand {
  harness::CoordinatorOptions options;
  ScenarioSelection selection;
  TargetOptions target;
  size_t agents = 2;
  std::string report_dir = "faultline-report";
  MetricsOptions metrics_options;

  int run() {
    if (selection.is_sut_suite()) return run_sut_suite();
    if (agents < 2) return usage_error("run", "--agents must be at least 2");
    if (auto present = target.check(); !present.ok())
      return usage_error("run", present.error().describe_with_hint());
    target.target = target.target.with_defaults();
    auto resolved = selection.resolve("run");
    if (!resolved) return kExitUsage;

    auto metrics = metrics_options.start();
    if (!metrics.ok()) return usage_error("run", metrics.error().describe_with_hint());
    const harness::RunMetadata metadata{selection.names.empty() ? selection.suite : "",
                                        target.target, selection.seed_or_random(),
                                        selection.strict};
    int code = kExitHarnessError;
    if (auto local = harness::LocalAgents::start({options, agents}, target.target); !local.ok()) {
      std::cerr << "faultline run: " << local.error().describe_with_hint() << "\n";
    } else {
      code = local.value()->run(*resolved, report_dir, metadata, std::cout, metrics->get());
    }  // the agents are gone before the metrics linger
    return metrics_options.finish("run", metrics->get(), code);
  }

  // Every scenario of scenarios/sut/ this machine can run (the others skipped with the reason:
  // the verbs ones run in the Soft-RoCE lane), each program under the interposers.
  int run_sut_suite() {
    auto scenarios = harness::sut::load_sut_scenarios({selection.sut_dir()}, "");
    if (!scenarios.ok()) return usage_error("run", scenarios.error().describe());
    if (scenarios->empty()) return usage_error("run", "no SUT scenarios in " + selection.sut_dir());
    auto metrics = metrics_options.start();
    if (!metrics.ok()) return usage_error("run", metrics.error().describe_with_hint());
    const int code = harness::sut::run_sut_suite(
        *scenarios, {own_executable(), report_dir, "sut", metrics->get()}, std::cout, std::cerr);
    return metrics_options.finish("run", metrics->get(), code);
  }
};

}  // namespace

namespace {

void add_coordinator_command(CLI::App& app, CommandAction& run) {
  auto coordinator = std::make_shared<CoordinatorCommand>();
  CLI::App* c =
      app.add_subcommand("coordinator", "Accept agents and run a suite over every pair of them");
  c->add_option("--listen", coordinator->options.listen,
                "ADDR:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  c->add_option("--agents", coordinator->options.agents, "How many agents to wait for")
      ->capture_default_str();
  c->add_option("--token-file", coordinator->token_file,
                "File with the shared token (else $FAULTLINE_TOKEN)");
  coordinator->selection.add_to(c);
  c->add_option("--report-dir", coordinator->report_dir,
                "Where report.json, junit.xml and summary.md go")
      ->check(report_dir())
      ->capture_default_str();
  c->add_option("--port-file", coordinator->port_file, "Write the port listened on to this file")
      ->check(user_file());
  c->add_option("--wait", coordinator->wait_seconds, "Seconds to wait for the agents")
      ->capture_default_str();
  add_step_timeout(c, coordinator->options);
  add_pairs(c, coordinator->options);
  coordinator->metrics_options.add_to(c, true);
  c->footer(
      "Example:\n  FAULTLINE_TOKEN=secret faultline coordinator --listen 0.0.0.0:7300 --agents 16 "
      "--suite links");
  c->callback([&run, coordinator] { run = [coordinator] { return coordinator->run(); }; });
}

void add_agent_command(CLI::App& app, CommandAction& run) {
  auto agent = std::make_shared<AgentCommand>();
  CLI::App* a = app.add_subcommand("agent", "Serve scenarios for a coordinator");
  a->add_option("--coordinator", agent->options.coordinator, "HOST:PORT of the coordinator")
      ->required();
  a->add_option("--token-file", agent->token_file,
                "File with the shared token (else $FAULTLINE_TOKEN)");
  a->add_option("--connect-timeout", agent->connect_timeout_s, "Seconds to keep trying to connect")
      ->check(seconds_up_to(86400))
      ->capture_default_str();
  agent->target.add_to(a);
  a->add_option("--name", agent->options.name,
                "How reports name this agent (default: the host name; made unique)")
      ->check(agent_label());
  a->add_option("--rail", agent->options.rail,
                "Rail label: with --pairs rail, agents pair only within their rail")
      ->check(agent_label());
  a->add_option("--switch", agent->options.switch_label,
                "Switch label: the monitor names a switch whose agents fail together")
      ->check(agent_label());
  a->add_flag("--reconnect", agent->options.reconnect,
              "Stay: when the coordinator goes away (a monitor restarting), join it again");
  a->add_option("--fault-file", agent->options.fault_file,
                "Faults this agent applies to its side of every scenario, read before each one "
                "(a JSON array of scenario fault entries without role; absent file: none)");
  a->add_option("--sut-scenarios", agent->sut_scenarios,
                "Run the roles of these SUT scenarios (a file or folder) when the coordinator "
                "names one, from this agent's own copy; without it, this agent runs no program");
  agent->metrics_options.add_to(a, false);
  a->footer(
      "Examples:\n  FAULTLINE_TOKEN=secret srun -N 16 faultline agent --coordinator head:7300 "
      "--transport verbs\n  faultline agent --coordinator head:7400 --reconnect --rail rail0   "
      "(for faultline monitor)");
  a->callback([&run, agent] { run = [agent] { return agent->run(); }; });
}

}  // namespace

void add_control_commands(CLI::App& app, CommandAction& run) {
  add_coordinator_command(app, run);
  add_agent_command(app, run);

  auto runner = std::make_shared<RunCommand>();
  CLI::App* r = app.add_subcommand(
      "run", "Run a suite with a local coordinator and agents (the default job)");
  runner->selection.add_to(r);
  runner->target.add_to(r);
  r->add_option("--agents", runner->agents, "How many local agents to start")
      ->capture_default_str();
  add_step_timeout(r, runner->options);
  add_pairs(r, runner->options);
  r->add_option("--report-dir", runner->report_dir,
                "Where report.json, junit.xml and summary.md go")
      ->check(report_dir())
      ->capture_default_str();
  runner->metrics_options.add_to(r, true);
  r->footer(
      "Examples:\n  faultline run\n  faultline run --provider shm --agents 4\n"
      "  faultline run --suite faults --seed 7\n  faultline run 'inline.*' --strict\n"
      "Exit codes: 0 all passed, 1 a conformance failure, 2 a usage error, 3 a harness error.");
  r->callback([&run, runner] { run = [runner] { return runner->run(); }; });

  auto child_fd = std::make_shared<int>(-1);
  CLI::App* s = app.add_subcommand("scenario-child", "Internal: one scenario, started by an agent");
  s->group("");  // hidden from --help
  s->add_option("--fd", *child_fd, "Socket shared with the agent")->required();
  auto priority = std::make_shared<std::optional<int>>();
  s->add_option("--priority", *priority, "A spare's nice value to take back with its scenario");
  s->callback([&run, child_fd, priority] {
    run = [child_fd, priority] { return harness::run_scenario_child(*child_fd, *priority); };
  });
}

}  // namespace faultline::cli
