// What Metrics keeps: its registry, its families and its push state (metrics.cpp counts into
// them, metrics_push.cpp pushes them and continues them from a Pushgateway).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "faultline/reports/metrics.hpp"

namespace faultline::reports {

/// Scenario runs take from a tenth of a second to minutes.
const prometheus::Histogram::BucketBoundaries& duration_bounds();

struct Metrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& scenarios;
  prometheus::Family<prometheus::Counter>& programs;
  prometheus::Family<prometheus::Counter>& sweep_points;
  prometheus::Family<prometheus::Histogram>& durations;
  prometheus::Family<prometheus::Counter>& faults;
  prometheus::Family<prometheus::Counter>& completions;
  prometheus::Family<prometheus::Counter>& bytes;
  prometheus::Family<prometheus::Histogram>& latency;
  prometheus::Family<prometheus::Gauge>& agents;
  prometheus::Family<prometheus::Counter>& agents_lost;
  prometheus::Family<prometheus::Gauge>& last_success;
  prometheus::Family<prometheus::Gauge>& build_info;
  /// faultline_infiniband_<node_exporter name>, made as counters show up.
  std::map<std::string, prometheus::Family<prometheus::Counter>*> infiniband;
  std::unique_ptr<prometheus::Exposer> exposer;

  std::set<std::string> agent_names;  ///< every agent_up series, to clear at the end
  std::string suite;                  ///< of the first run started

  // Pushing (push_to).
  std::optional<PushGroup> push_group;
  std::chrono::milliseconds push_interval{5000};
  std::chrono::steady_clock::time_point last_push;
  bool continued = false;      ///< the gateway's counters were read (or could not be)
  bool push_troubled = false;  ///< a read or push failed: said once, only `finish` tries again

  Impl();
  /// faultline_infiniband_`name`, made on first use; nullptr past the bound on families.
  prometheus::Family<prometheus::Counter>* infiniband_family(const std::string& name);
};

}  // namespace faultline::reports
