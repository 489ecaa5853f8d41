#pragma once

#include <memory>
#include <string>

#include "faultline/core/status.hpp"
#include "faultline/reports/report_sink.hpp"

namespace prometheus {
class Registry;
}

namespace faultline::reports {

/// The Prometheus metrics of one faultline process (reports/README.md), in one
/// registry: served over HTTP for Prometheus to scrape (`--metrics-port`) and pushed to a
/// Pushgateway at the end of a run (`--pushgateway`). Names carry their unit and counters end
/// in `_total`:
///   faultline_scenarios_total{suite,scenario,verdict,transport,device}
///   faultline_sut_verdicts_total{suite,scenario,verdict}: SUT scenarios, by how the judged
///     program reacted (detected, silent-corruption, hang, ...)
///   faultline_scenario_duration_seconds{suite,scenario} (histogram)
///   faultline_faults_injected_total{kind}
///   faultline_completions_total{status}
///   faultline_bytes_total{direction}  (sent, received)
///   faultline_operation_latency_seconds{op} (histogram)
///   faultline_infiniband_<node_exporter name>{device,port,scenario,counter}: how much a
///     port counter grew during scenarios (see infiniband_names.hpp)
///   faultline_agent_up{agent}
class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  /// Serves /metrics on "PORT" (127.0.0.1) or "ADDR:PORT" until destroyed. Only GET of the
  /// metrics is answered: nothing can be changed through it.
  Status serve(const std::string& listen);
  /// The port it serves on (useful with port 0).
  int port() const;
  /// Pushes everything to the Pushgateway at `url` ("http://host:9091") under `job`.
  Status push(const std::string& url, const std::string& job) const;

  /// One finished scenario run: its verdict and duration, and what its sides reported: faults
  /// applied, traffic, port counter growth (each port once, however many sides share it).
  void count_scenario(const nlohmann::json& scenario, const std::string& suite,
                      const std::string& transport, const std::string& device);
  void set_agent_up(const std::string& agent, bool up);

  prometheus::Registry& registry();

 private:
  void count_faults(const nlohmann::json& details);
  void count_traffic(const nlohmann::json& details);
  void count_port_counters(const std::string& scenario, const nlohmann::json& sides);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Counts every finished scenario of a run into `metrics`, and marks the run's agents up or
/// lost.
class MetricsSink final : public ReportSink {
 public:
  explicit MetricsSink(Metrics& metrics) : metrics_(metrics) {}
  Status on_run_started(const nlohmann::json& report) override;
  Status on_scenario_finished(const nlohmann::json& scenario,
                              const nlohmann::json& report) override;
  Status on_run_finished(const nlohmann::json& report) override;

 private:
  void mark_agents(const nlohmann::json& report);
  Metrics& metrics_;
};

}  // namespace faultline::reports
