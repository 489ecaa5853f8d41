#include "faultline/reports/monitor_metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <ctime>
#include <map>
#include <set>

namespace faultline::reports {

namespace {

using nlohmann::json;

std::string text(const json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_string() && !found->get<std::string>().empty()
             ? found->get<std::string>()
             : "none";
}

double number(const json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_number() ? found->get<double>() : 0;
}

// Removes from `family` every series whose labels are not in `keep`, and returns `keep`.
template <typename T>
void keep_only(prometheus::Family<T>& family, std::map<prometheus::Labels, T*>& series,
               const std::set<prometheus::Labels>& keep) {
  for (auto it = series.begin(); it != series.end();) {
    if (keep.contains(it->first)) {
      ++it;
      continue;
    }
    family.Remove(it->second);
    it = series.erase(it);
  }
}

template <typename T>
T& series_of(prometheus::Family<T>& family, std::map<prometheus::Labels, T*>& series,
             std::set<prometheus::Labels>& seen, const prometheus::Labels& labels) {
  seen.insert(labels);
  auto& metric = family.Add(labels);
  series[labels] = &metric;
  return metric;
}

}  // namespace

struct MonitorMetrics::Impl {
  explicit Impl(prometheus::Registry& registry)
      : rounds(prometheus::BuildCounter()
                   .Name("faultline_monitor_rounds_total")
                   .Help("Probe rounds the monitor finished")
                   .Register(registry)
                   .Add({})),
        duration(prometheus::BuildHistogram()
                     .Name("faultline_monitor_round_duration_seconds")
                     .Help("How long a probe round took")
                     .Register(registry)
                     .Add({}, prometheus::Histogram::BucketBoundaries{0.5, 1, 2.5, 5, 10, 30, 60,
                                                                      120, 300, 600})),
        last_round(prometheus::BuildGauge()
                       .Name("faultline_monitor_last_round_timestamp_seconds")
                       .Help("When the last probe round ended (Unix time)")
                       .Register(registry)
                       .Add({})),
        interval(prometheus::BuildGauge()
                     .Name("faultline_monitor_interval_seconds")
                     .Help("The time between the starts of two rounds (--every)")
                     .Register(registry)
                     .Add({})),
        connected(prometheus::BuildGauge()
                      .Name("faultline_monitor_agents_connected")
                      .Help("Agents in the last round")
                      .Register(registry)
                      .Add({})),
        fabric_rtt(prometheus::BuildGauge()
                       .Name("faultline_monitor_fabric_rtt_seconds")
                       .Help("The median of the pairs' round-trip p50 in the last round")
                       .Register(registry)
                       .Add({})),
        healthy(prometheus::BuildGauge()
                    .Name("faultline_monitor_agent_healthy")
                    .Help("1, or 0 while the agent is a suspect")
                    .Register(registry)),
        agent_rtt(prometheus::BuildGauge()
                      .Name("faultline_monitor_agent_rtt_seconds")
                      .Help("An agent's round trips: the median of its pairs' p50 (percentile "
                            "p50), the largest of their p99 (p99)")
                      .Register(registry)),
        agent_pairs(prometheus::BuildGauge()
                        .Name("faultline_monitor_agent_pairs")
                        .Help("An agent's pairs in the last round, by state")
                        .Register(registry)),
        host_wait(prometheus::BuildGauge()
                      .Name("faultline_monitor_agent_host_wait_seconds")
                      .Help("While an agent's host is busy: its median wait for a CPU per probe "
                            "round trip in the last round (its pairs too host-busy to judge)")
                      .Register(registry)),
        failed_pairs(prometheus::BuildCounter()
                         .Name("faultline_monitor_agent_failed_pairs_total")
                         .Help("Probes of an agent's pairs that failed")
                         .Register(registry)),
        suspect(prometheus::BuildGauge()
                    .Name("faultline_suspect")
                    .Help("1 while the monitor names the agent as the likely fault")
                    .Register(registry)),
        suspect_group(prometheus::BuildGauge()
                          .Name("faultline_suspect_group")
                          .Help("1 while the monitor names a rail, switch, host, link or the "
                                "fabric as the likely fault")
                          .Register(registry)),
        pair_rtt(prometheus::BuildGauge()
                     .Name("faultline_monitor_pair_rtt_seconds")
                     .Help("A pair's round-trip p50 in the last round (--pair-metrics)")
                     .Register(registry)),
        pair_ok(prometheus::BuildGauge()
                    .Name("faultline_monitor_pair_ok")
                    .Help("1 when the pair's probe passed and was not slow (or its hosts were "
                          "too busy to judge it), else 0 (--pair-metrics)")
                    .Register(registry)) {}

  prometheus::Counter& rounds;
  prometheus::Histogram& duration;
  prometheus::Gauge& last_round;
  prometheus::Gauge& interval;
  prometheus::Gauge& connected;
  prometheus::Gauge& fabric_rtt;
  prometheus::Family<prometheus::Gauge>& healthy;
  prometheus::Family<prometheus::Gauge>& agent_rtt;
  prometheus::Family<prometheus::Gauge>& agent_pairs;
  prometheus::Family<prometheus::Gauge>& host_wait;
  prometheus::Family<prometheus::Counter>& failed_pairs;
  prometheus::Family<prometheus::Gauge>& suspect;
  prometheus::Family<prometheus::Gauge>& suspect_group;
  prometheus::Family<prometheus::Gauge>& pair_rtt;
  prometheus::Family<prometheus::Gauge>& pair_ok;
  // The series made, so those of agents, suspects and pairs gone can be removed.
  std::map<prometheus::Labels, prometheus::Gauge*> healthy_series, rtt_series, pairs_series,
      host_wait_series, suspect_series, group_series, pair_rtt_series, pair_ok_series;
  std::map<prometheus::Labels, prometheus::Counter*> failed_series;
  bool pair_metrics = false;
};

MonitorMetrics::MonitorMetrics(prometheus::Registry& registry, bool pair_metrics)
    : impl_(std::make_unique<Impl>(registry)) {
  impl_->pair_metrics = pair_metrics;
}
MonitorMetrics::~MonitorMetrics() = default;

void MonitorMetrics::count_round(const json& section) {
  Impl& m = *impl_;
  m.rounds.Increment();
  m.duration.Observe(number(section, "duration_seconds"));
  m.last_round.Set(static_cast<double>(std::time(nullptr)));
  m.interval.Set(number(section, "interval_seconds"));
  m.fabric_rtt.Set(number(section, "median_rtt_seconds"));
  const json agents = section.value("agents", json::array());
  m.connected.Set(static_cast<double>(agents.size()));

  std::set<prometheus::Labels> healthy, rtt, pairs, host_wait, failed, suspects, groups, pair_rtt,
      pair_ok;
  for (const auto& agent : agents) {
    const std::string name = text(agent, "name");
    series_of(m.healthy, m.healthy_series, healthy,
              {{"agent", name}, {"rail", text(agent, "rail")}})
        .Set(agent.value("suspect", false) ? 0 : 1);
    if (agent.contains("rtt_p50_seconds")) {
      series_of(m.agent_rtt, m.rtt_series, rtt, {{"agent", name}, {"percentile", "p50"}})
          .Set(number(agent, "rtt_p50_seconds"));
      series_of(m.agent_rtt, m.rtt_series, rtt, {{"agent", name}, {"percentile", "p99"}})
          .Set(number(agent, "rtt_p99_seconds"));
    }
    const double all = number(agent, "pairs");
    const double failed_count = number(agent, "failed");
    const double slow = number(agent, "slow");
    const double host_busy = number(agent, "host_busy");
    for (const auto& [state, count] :
         {std::pair{"ok", all - failed_count - slow - host_busy}, std::pair{"slow", slow},
          std::pair{"failed", failed_count}, std::pair{"host busy", host_busy}})
      series_of(m.agent_pairs, m.pairs_series, pairs, {{"agent", name}, {"state", state}})
          .Set(count);
    if (agent.contains("host_wait_seconds"))
      series_of(m.host_wait, m.host_wait_series, host_wait, {{"agent", name}})
          .Set(number(agent, "host_wait_seconds"));
    series_of(m.failed_pairs, m.failed_series, failed, {{"agent", name}}).Increment(failed_count);
  }
  for (const auto& suspect : section.value("suspects", json::array())) {
    const std::string kind = text(suspect, "kind");
    if (kind == "agent") {
      series_of(m.suspect, m.suspect_series, suspects,
                {{"agent", text(suspect, "name")}, {"reason", text(suspect, "reason")}})
          .Set(1);
    } else {
      series_of(
          m.suspect_group, m.group_series, groups,
          {{"kind", kind}, {"name", text(suspect, "name")}, {"reason", text(suspect, "reason")}})
          .Set(1);
    }
  }
  if (m.pair_metrics && agents.size() <= kMostAgentsForPairMetrics) {
    for (const auto& pair : section.value("pairs", json::array())) {
      const prometheus::Labels labels = {{"a", text(pair, "a")}, {"b", text(pair, "b")}};
      if (pair.contains("rtt_p50_seconds"))
        series_of(m.pair_rtt, m.pair_rtt_series, pair_rtt, labels)
            .Set(number(pair, "rtt_p50_seconds"));
      series_of(m.pair_ok, m.pair_ok_series, pair_ok, labels)
          .Set(text(pair, "state") == "ok" || text(pair, "state") == "host busy" ? 1 : 0);
    }
  }
  keep_only(m.healthy, m.healthy_series, healthy);
  keep_only(m.agent_rtt, m.rtt_series, rtt);
  keep_only(m.agent_pairs, m.pairs_series, pairs);
  keep_only(m.host_wait, m.host_wait_series, host_wait);
  keep_only(m.failed_pairs, m.failed_series, failed);
  keep_only(m.suspect, m.suspect_series, suspects);
  keep_only(m.suspect_group, m.group_series, groups);
  keep_only(m.pair_rtt, m.pair_rtt_series, pair_rtt);
  keep_only(m.pair_ok, m.pair_ok_series, pair_ok);
}

}  // namespace faultline::reports
