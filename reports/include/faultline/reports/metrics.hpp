#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/reports/pushgateway.hpp"
#include "faultline/reports/report_sink.hpp"

namespace prometheus {
class Registry;
}

namespace faultline::reports {

/// The faultline build a process runs, exported as faultline_build_info.
struct BuildInfo {
  std::string version;     ///< "0.9.0"
  std::string transports;  ///< compiled in: "ofi,verbs"
};

/// The label sets a run will use, so every counter exists at 0 before the run counts into
/// it: a dashboard's increase() then sees the first failure (a series that first appears at 1
/// shows no increase).
struct MetricsPlan {
  std::string suite;
  std::vector<std::string> scenarios;  ///< the scenario ids the run will count
  bool sut = false;                    ///< the run judges programs (faultline_sut_verdicts_total)
  bool sweep = false;     ///< the run sweeps fault points (faultline_sweep_points_total)
  std::string transport;  ///< "ofi/tcp", as count_scenario will be told
  std::string device;
  /// Every value a label may take, by label: "verdict", "sut_verdict", "status", "kind", "op"
  /// (the harness knows them; reports/ does not depend on it).
  std::map<std::string, std::vector<std::string>> label_values;
};

/// The Prometheus metrics of one faultline process (docs/metrics.md), in one registry: served
/// over HTTP for Prometheus to scrape (`--metrics-port`) and pushed to a Pushgateway during and
/// at the end of a run (`--pushgateway`), under the grouping key job, instance, suite. Names
/// carry their unit and counters end in `_total`:
///   faultline_scenarios_total{suite,scenario,verdict,transport,device}
///   faultline_sut_verdicts_total{suite,scenario,verdict}: SUT scenarios, by how the judged
///     program reacted (detected, silent-corruption, hang, ...)
///   faultline_sweep_points_total{verdict}: a sweep's fault points (scenarios tagged `sweep`),
///     by how the program reacted, `not-run` for those its budget left out
///   faultline_scenario_duration_seconds{suite} (histogram; the scenario's own is in the report)
///   faultline_faults_injected_total{kind}
///   faultline_completions_total{status}
///   faultline_bytes_total{direction}  (sent, received)
///   faultline_operation_latency_seconds{op} (histogram, buckets from 500 ns)
///   faultline_infiniband_<node_exporter name>{device,port,scenario,counter}: how much a
///     port counter grew during scenarios (see infiniband_names.hpp)
///   faultline_agent_up{agent}: 1 while a run's agent is connected, 0 once lost or finished
///   faultline_agents_lost_total
///   faultline_last_success_timestamp_seconds{suite}: when a run of the suite last passed
///   faultline_build_info{version,transports}: 1
/// Thread-safety: one thread counts; serving runs on the exposer's threads.
class Metrics {
 public:
  explicit Metrics(const BuildInfo& build = {});
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  /// Serves /metrics on "PORT" (127.0.0.1) or "ADDR:PORT" until destroyed. Only GET of the
  /// metrics is answered: nothing can be changed through it.
  Status serve(const std::string& listen);
  /// The port it serves on (useful with port 0).
  int port() const;

  /// Pushes to the Pushgateway at `url` (job "faultline", `instance`, and the suite of the
  /// first run started): at the start of the run, at most every `interval` while it goes, and
  /// in `finish`. The start first reads what the gateway holds for the group and continues its
  /// counters from there, so they only grow from run to run, as counters must.
  void push_to(const std::string& url, const std::string& instance,
               std::chrono::milliseconds interval = std::chrono::seconds(5));

  /// A run begins: every label set of `plan` is made at 0 (or continued from the gateway),
  /// then pushed. A gateway that cannot be read or pushed to is said on stderr once; the
  /// run goes on and `finish` tries again.
  void start_run(const MetricsPlan& plan);
  /// One finished scenario run: its verdict and duration, and what its sides reported: faults
  /// applied, traffic, port counter growth (each port once, however many sides share it).
  void count_scenario(const nlohmann::json& scenario, const std::string& suite,
                      const std::string& transport, const std::string& device);
  void set_agent_up(const std::string& agent, bool up);
  void count_agent_lost();
  /// A run ended: its agents are no longer up (every agent_up 0).
  void end_run();
  /// The process's work ended: the suite's last success is now when `passed`, and the final
  /// state is pushed (its error, if pushing was asked and failed).
  Status finish(bool passed);

  prometheus::Registry& registry();

 private:
  void prepare(const MetricsPlan& plan);
  /// Adds what the gateway holds for the push group to the counters, histograms and the last
  /// success, once.
  void continue_from_gateway();
  void push_if_due();
  Status push_now();
  void count_faults(const nlohmann::json& details);
  void count_traffic(const nlohmann::json& details);
  void count_port_counters(const std::string& scenario, const nlohmann::json& sides);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Counts every finished scenario of a run into `metrics`, and marks the run's agents up at
/// its start and cleared at its end.
class MetricsSink final : public ReportSink {
 public:
  MetricsSink(Metrics& metrics, MetricsPlan plan) : metrics_(metrics), plan_(std::move(plan)) {}
  Status on_run_started(const nlohmann::json& report) override;
  Status on_scenario_finished(const nlohmann::json& scenario,
                              const nlohmann::json& report) override;
  Status on_run_finished(const nlohmann::json& report) override;

 private:
  Metrics& metrics_;
  MetricsPlan plan_;
};

/// "ofi/tcp" from a report's run target; the device, or "default" where the run names none.
std::string metrics_transport(const nlohmann::json& report);
std::string metrics_device(const nlohmann::json& report);

}  // namespace faultline::reports
