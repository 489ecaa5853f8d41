// faultline monitor: a coordinator that stays up and probes its agents' pairs every interval.
#include <csignal>
#include <fstream>
#include <iostream>

#include "cli/scenario_selection.hpp"
#include "faultline/harness/base/duration.hpp"
#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/control/auth.hpp"
#include "faultline/harness/monitor/monitor.hpp"
#include "faultline/reports/atomic_file.hpp"
#include "faultline/reports/metrics.hpp"
#include "faultline/reports/monitor_metrics.hpp"
#include "options/commands.hpp"
#include "options/coordinator_options.hpp"
#include "options/metrics_options.hpp"
#include "options/option_checks.hpp"

namespace faultline::cli {

namespace {

std::atomic<bool> stop_requested{false};

void request_stop(int /*signal*/) { stop_requested = true; }

struct MonitorCommand {
  harness::CoordinatorOptions coordinator;
  harness::monitor::MonitorOptions monitor;
  std::string token_file;
  std::string port_file;
  ScenarioSelection selection;
  MetricsOptions metrics_options;
  bool pair_metrics = false;

  int run() {
    auto token = harness::control::load_token(token_file);
    if (!token.ok()) return usage(token.error().describe_with_hint());
    coordinator.token = token.value();
    coordinator.open_membership = true;
    auto scenarios = selection.resolve("monitor");
    if (!scenarios) return harness::kExitUsage;
    monitor.scenarios = std::move(scenarios).value();
    monitor.suite = selection.names.empty() ? selection.suite : "selection";
    monitor.seed = selection.seed_or_random();
    auto metrics = metrics_options.start();
    if (!metrics.ok()) return usage(metrics.error().describe_with_hint());
    std::unique_ptr<reports::MonitorMetrics> monitor_metrics;
    if (*metrics) {
      monitor_metrics =
          std::make_unique<reports::MonitorMetrics>((*metrics)->registry(), pair_metrics);
    }
    harness::Coordinator listening(coordinator);
    if (auto listened = listening.listen(); !listened.ok())
      return usage(listened.error().describe_with_hint());
    if (!port_file.empty()) {
      const std::string port = std::to_string(listening.port()) + "\n";
      if (auto written = reports::write_user_file(port_file, port); !written.ok())
        return usage("--port-file: " + written.error().describe_with_hint());
    }
    // SIGINT and SIGTERM end the monitor after the round under way; its agents (with
    // --reconnect) wait for the next monitor on this address.
    std::signal(SIGINT, request_stop);
    std::signal(SIGTERM, request_stop);
    const int code =
        harness::monitor::run_monitor(listening, monitor, monitor_metrics.get(), stop_requested);
    return metrics_options.finish("monitor", metrics->get(), code);
  }

  static int usage(const std::string& text) {
    std::cerr << "faultline monitor: " << text << "\n";
    return harness::kExitUsage;
  }
};

// How the monitor judges a round: when a pair is slow, when a suspect is named.
void add_localization_options(CLI::App* m, harness::monitor::LocalizationSettings& settings) {
  m->add_option("--slow-factor", settings.slow_factor,
                "A pair is slow above this many times the fabric's median round trip")
      ->capture_default_str()
      ->check(number_between(1.1, 1000.0));
  m->add_option("--confirm", settings.confirm_rounds,
                "Name a suspect once it held this many rounds in a row (before: watching)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{100}));
}

}  // namespace

void add_monitor_command(CLI::App& app, CommandAction& run) {
  auto command = std::make_shared<MonitorCommand>();
  command->coordinator.listen = "127.0.0.1:7400";
  command->coordinator.agents = 4096;
  command->selection.suite = "pingmesh";
  CLI::App* m = app.add_subcommand(
      "monitor",
      "Stay up and probe the agents' pairs every interval; name the NIC, rail or "
      "link at fault");
  m->add_option("--listen", command->coordinator.listen,
                "ADDR:PORT to listen on for agents (port 0: any free port)")
      ->capture_default_str();
  m->add_option("--token-file", command->token_file,
                "File with the shared token (else $FAULTLINE_TOKEN)");
  m->add_option_function<std::string>(
       "--every",
       [command](const std::string& text) {
         const auto every = harness::parse_duration(text);
         if (!every)
           throw CLI::ValidationError(
               "--every: expected a duration (60s, 2m, 500ms), "
               "got '" +
               text + "'");
         command->monitor.every = *every;
       },
       "Time from the start of one round to the next (60s, 2m, 500ms; default 60s)")
      ->type_name("DURATION");
  m->add_option("--max-agents", command->coordinator.agents, "Most agents connected at once")
      ->capture_default_str()
      ->check(count_between(2, 100000));
  m->add_option("--concurrency", command->coordinator.max_concurrent_runs,
                "Most pairs probed at once (0: every disjoint pair of a round; 1 when the agents "
                "share a host's cores)")
      ->capture_default_str()
      ->check(count_between(0, 100000));
  command->selection.add_to(m);
  add_pairs(m, command->coordinator);
  add_step_timeout(m, command->coordinator);
  m->add_option("--report-dir", command->monitor.report_dir,
                "Where each round's report goes (rounds/, latest.json)")
      ->check(report_dir())
      ->capture_default_str();
  m->add_option("--keep-rounds", command->monitor.keep_rounds, "Round reports kept")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1000000}));
  m->add_option("--rounds", command->monitor.rounds, "Stop after this many rounds (0: never)")
      ->capture_default_str()
      ->check(whole_number());
  add_localization_options(m, command->monitor.localization);
  m->add_flag("--pair-metrics", command->pair_metrics,
              "Also export each pair's round trip (up to 64 agents)");
  m->add_option("--port-file", command->port_file, "Write the port listened on to this file")
      ->check(user_file());
  command->metrics_options.add_to(m, false);
  m->footer(
      "Example:\n  faultline monitor --listen 0.0.0.0:7400 --every 60s --metrics-port 9470\n"
      "  faultline agent --coordinator head:7400 --reconnect --rail rail0   (on every node)\n"
      "Each round's report: faultline-monitor/rounds/; `faultline report --format html` shows "
      "one.");
  m->callback([&run, command] { run = [command] { return command->run(); }; });
}

}  // namespace faultline::cli
