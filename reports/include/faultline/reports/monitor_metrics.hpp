#pragma once

#include <memory>
#include <nlohmann/json.hpp>

namespace prometheus {
class Registry;
}

namespace faultline::reports {

/// The metrics of `faultline monitor`, counted from each round's `monitor` section
/// (report.schema.json) into `registry` (a process's Metrics registry, served with it).
/// Cardinality stays bounded by the agents, not their pairs:
///   faultline_monitor_rounds_total, faultline_monitor_round_duration_seconds (histogram),
///   faultline_monitor_last_round_timestamp_seconds, faultline_monitor_interval_seconds,
///   faultline_monitor_agents_connected, faultline_monitor_fabric_rtt_seconds (the median)
///   faultline_monitor_agent_healthy{agent,rail}: 1, or 0 while it is a suspect
///   faultline_monitor_agent_rtt_seconds{agent,percentile}: the median of its pairs' p50 (p50)
///     and the largest of their p99 (p99); not `quantile`, which Prometheus keeps for summaries
///   faultline_monitor_agent_pairs{agent,state}: its pairs in the last round, ok/slow/failed
///   faultline_monitor_agent_failed_pairs_total{agent}
///   faultline_suspect{agent,reason}: 1 while the agent is a suspect (gone once it is not)
///   faultline_suspect_group{kind,name,reason}: a rail, switch, host, link or the fabric
///   faultline_monitor_pair_rtt_seconds{a,b}, faultline_monitor_pair_ok{a,b}: only with
///     `pair_metrics` and at most 64 agents
/// An agent absent from a round loses its series. One thread counts.
class MonitorMetrics {
 public:
  MonitorMetrics(prometheus::Registry& registry, bool pair_metrics);
  ~MonitorMetrics();
  MonitorMetrics(const MonitorMetrics&) = delete;
  MonitorMetrics& operator=(const MonitorMetrics&) = delete;

  static constexpr size_t kMostAgentsForPairMetrics = 64;

  void count_round(const nlohmann::json& section);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultline::reports
