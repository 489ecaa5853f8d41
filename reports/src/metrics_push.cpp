// Pushing a process's metrics to a Pushgateway, and continuing the counters the gateway holds
// for the push group, so they grow from run to run as counters must.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <iostream>

#include "faultline/core/latency_buckets.hpp"
#include "metrics_impl.hpp"

namespace faultline::reports {

namespace {

using nlohmann::json;

constexpr auto kReadTimeout = std::chrono::seconds(5);
// A push, all of it: a gateway that accepts and never answers ends there, not the run.
constexpr auto kPushTimeout = std::chrono::seconds(10);
// What one family may bring back from a gateway: a gateway is a peer like any other.
constexpr size_t kMostSeriesCarried = 100000;

std::optional<double> number(const json& text) {
  if (!text.is_string()) return std::nullopt;
  try {
    size_t used = 0;
    const double value = std::stod(text.get<std::string>(), &used);
    if (used != text.get<std::string>().size() || !std::isfinite(value)) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A series' labels, when they are `names` with non-empty string values, besides those the
// gateway adds from the grouping key.
std::optional<prometheus::Labels> labels_named(const json& metric,
                                               const std::vector<std::string>& names) {
  prometheus::Labels result;
  for (const auto& [name, value] : metric.at("labels").items()) {
    const bool ours = std::find(names.begin(), names.end(), name) != names.end();
    if (!ours && (name == "job" || name == "instance" || name == "suite")) continue;
    if (!ours || !value.is_string() || value.get<std::string>().empty()) return std::nullopt;
    result[name] = value.get<std::string>();
  }
  if (result.size() != names.size()) return std::nullopt;
  return result;
}

// A histogram's cumulative buckets from the API as increments over `bounds` (+Inf last), or
// empty when its buckets are not these (another faultline version's).
std::vector<double> increments_over(const json& metric,
                                    const prometheus::Histogram::BucketBoundaries& bounds) {
  const json buckets = metric.value("buckets", json());
  const auto count = number(metric.value("count", json()));
  if (!buckets.is_object() || buckets.size() != bounds.size() + 1 || !count) return {};
  std::vector<double> increments;
  double below = 0;
  for (double bound : bounds) {
    std::optional<double> cumulative;
    for (const auto& [text, value] : buckets.items()) {
      const auto at = number(json(text));
      if (at && std::abs(*at - bound) <= 1e-12 * std::max(1.0, bound)) cumulative = number(value);
    }
    if (!cumulative || *cumulative < below) return {};
    increments.push_back(*cumulative - below);
    below = *cumulative;
  }
  if (*count < below) return {};
  increments.push_back(*count - below);
  return increments;
}

void carry_counters(prometheus::Family<prometheus::Counter>& family, const json& metrics,
                    const std::vector<std::string>& names) {
  size_t carried = 0;
  for (const auto& metric : metrics) {
    const auto labels = labels_named(metric, names);
    const auto value = number(metric.value("value", json()));
    if (!labels || !value || *value < 0 || carried++ >= kMostSeriesCarried) continue;
    family.Add(*labels).Increment(*value);
  }
}

void carry_histograms(prometheus::Family<prometheus::Histogram>& family, const json& metrics,
                      const std::vector<std::string>& names,
                      const prometheus::Histogram::BucketBoundaries& bounds) {
  size_t carried = 0;
  for (const auto& metric : metrics) {
    const auto labels = labels_named(metric, names);
    const auto increments = increments_over(metric, bounds);
    const auto sum = number(metric.value("sum", json()));
    if (!labels || increments.empty() || !sum || carried++ >= kMostSeriesCarried) continue;
    family.Add(*labels, bounds).ObserveMultiple(increments, *sum);
  }
}

}  // namespace

void Metrics::push_to(const std::string& url, const std::string& instance,
                      std::chrono::milliseconds interval) {
  impl_->push_group = PushGroup{url, "faultline", {{"instance", grouping_value(instance)}}};
  impl_->push_interval = interval;
}

void Metrics::continue_from_gateway() {
  Impl& m = *impl_;
  if (!m.push_group || m.continued) return;
  m.continued = true;
  m.push_group->labels["suite"] = grouping_value(m.suite);
  auto held = read_push_group(*m.push_group, kReadTimeout);
  if (!held.ok()) {
    std::cerr << "faultline: the counters of " << m.push_group->describe()
              << " start from 0: " << held.error().describe_with_hint() << "\n";
    m.push_troubled = true;
    return;
  }
  const std::map<std::string,
                 std::pair<prometheus::Family<prometheus::Counter>*, std::vector<std::string>>>
      counters = {
          {"faultline_scenarios_total",
           {&m.scenarios, {"suite", "scenario", "verdict", "transport", "device"}}},
          {"faultline_sut_verdicts_total", {&m.programs, {"suite", "scenario", "verdict"}}},
          {"faultline_faults_injected_total", {&m.faults, {"kind"}}},
          {"faultline_completions_total", {&m.completions, {"status"}}},
          {"faultline_bytes_total", {&m.bytes, {"direction"}}},
          {"faultline_agents_lost_total", {&m.agents_lost, {}}},
      };
  for (const auto& [name, family] : held.value().items()) {
    const json& metrics = family.at("metrics");
    const std::string type = family.value("type", "");
    if (const auto counter = counters.find(name); counter != counters.end()) {
      if (type == "COUNTER")
        carry_counters(*counter->second.first, metrics, counter->second.second);
    } else if (name == "faultline_scenario_duration_seconds" && type == "HISTOGRAM") {
      carry_histograms(m.durations, metrics, {"suite"}, duration_bounds());
    } else if (name == "faultline_operation_latency_seconds" && type == "HISTOGRAM") {
      carry_histograms(m.latency, metrics, {"op"}, latency_bounds_seconds());
    } else if (name.rfind("faultline_infiniband_", 0) == 0 && type == "COUNTER") {
      if (auto* ib = m.infiniband_family(name.substr(std::string("faultline_infiniband_").size())))
        carry_counters(*ib, metrics, {"device", "port", "scenario", "counter"});
    } else if (name == "faultline_last_success_timestamp_seconds" && type == "GAUGE") {
      for (const auto& metric : metrics) {
        const auto labels = labels_named(metric, {"suite"});
        const auto value = number(metric.value("value", json()));
        if (labels && value) m.last_success.Add(*labels).Set(*value);
      }
    }
  }
}

void Metrics::start_run(const MetricsPlan& plan) {
  if (impl_->suite.empty()) impl_->suite = plan.suite.empty() ? "selection" : plan.suite;
  continue_from_gateway();
  prepare(plan);
  if (impl_->push_group && !impl_->push_troubled) {
    if (auto pushed = push_now(); !pushed.ok()) {
      std::cerr << "faultline: " << pushed.error().describe_with_hint()
                << " (the run goes on; the push at its end tries again)\n";
      impl_->push_troubled = true;
    }
  }
}

void Metrics::push_if_due() {
  Impl& m = *impl_;
  if (!m.push_group || m.push_troubled ||
      std::chrono::steady_clock::now() - m.last_push < m.push_interval)
    return;
  if (auto pushed = push_now(); !pushed.ok()) {
    std::cerr << "faultline: " << pushed.error().describe_with_hint()
              << " (the run goes on; the push at its end tries again)\n";
    m.push_troubled = true;
  }
}

Status Metrics::push_now() {
  impl_->last_push = std::chrono::steady_clock::now();
  return push_group(*impl_->push_group, impl_->registry, kPushTimeout);
}

void Metrics::end_run() {
  for (const auto& agent : impl_->agent_names) impl_->agents.Add({{"agent", agent}}).Set(0);
}

Status Metrics::finish(bool passed) {
  Impl& m = *impl_;
  if (passed) {
    m.last_success.Add({{"suite", m.suite.empty() ? "selection" : m.suite}})
        .Set(static_cast<double>(std::time(nullptr)));
  }
  if (!m.push_group) return {};
  // A process that never started a run still has a group to push to.
  if (!m.push_group->labels.contains("suite"))
    m.push_group->labels["suite"] = grouping_value(m.suite);
  return push_now();
}

}  // namespace faultline::reports
