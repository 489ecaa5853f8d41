#include "faultline/reports/metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gateway.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <optional>
#include <tuple>

#include "faultline/core/latency_buckets.hpp"
#include "faultline/reports/infiniband_names.hpp"
#include "faultline/reports/report_view.hpp"

namespace faultline::reports {

namespace {

// Scenario runs take from a tenth of a second to minutes.
prometheus::Histogram::BucketBoundaries duration_buckets() {
  return {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
}

constexpr size_t kMaxInfinibandFamilies = 256;

// A count a side reported, or 0 where it is missing or not a count: sides come from peers.
std::optional<uint64_t> as_count(const nlohmann::json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) return value.get<uint64_t>();
  return std::nullopt;
}

uint64_t count_at(const nlohmann::json& object, const std::string& key) {
  if (!object.is_object()) return 0;
  const auto found = object.find(key);
  return found != object.end() ? as_count(*found).value_or(0) : 0;
}

std::string text_at(const nlohmann::json& object, const std::string& key) {
  if (!object.is_object()) return "";
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

// A report's latency buckets as prometheus-cpp increments, or empty where they do not fit the
// metric's buckets.
std::vector<double> bucket_increments(const nlohmann::json& histogram) {
  const auto& bounds = latency_bounds_seconds();
  const nlohmann::json buckets =
      histogram.is_object() ? histogram.value("buckets", nlohmann::json()) : nlohmann::json();
  if (!buckets.is_array() || buckets.size() != bounds.size() + 1) return {};
  std::vector<double> increments;
  for (const auto& bucket : buckets) {
    const auto count = as_count(bucket);
    if (!count) return {};
    increments.push_back(static_cast<double>(*count));
  }
  return increments;
}

// Sides on one host's port share its counters: each port counts once per scenario, with the
// largest growth any side saw.
using PortKey = std::tuple<std::string, std::string, uint64_t>;  // host, device, port
std::map<PortKey, std::map<std::string, uint64_t>> port_growth(const nlohmann::json& sides) {
  std::map<PortKey, std::map<std::string, uint64_t>> growth;
  for (const auto& [agent, side] : sides.items()) {
    const nlohmann::json::json_pointer at("/details/port_counters");
    if (!side.is_object() || !side.contains(at) || !side.at(at).is_object()) continue;
    const nlohmann::json& counters = side.at(at);
    const nlohmann::json grown = counters.value("grown", nlohmann::json::object());
    if (!grown.is_object()) continue;
    auto& port = growth[{text_at(counters, "host"), text_at(counters, "device"),
                         count_at(counters, "port")}];
    for (const auto& [counter, value] : grown.items()) {
      const uint64_t amount = count_at(grown, counter);
      port[counter] = std::max(port[counter], amount);
    }
  }
  return growth;
}

}  // namespace

struct Metrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& scenarios =
      prometheus::BuildCounter()
          .Name("faultline_scenarios_total")
          .Help("Scenario runs finished, by verdict")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& programs =
      prometheus::BuildCounter()
          .Name("faultline_sut_verdicts_total")
          .Help("SUT scenarios finished, by how the judged program reacted to its faults")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& durations =
      prometheus::BuildHistogram()
          .Name("faultline_scenario_duration_seconds")
          .Help("How long scenario runs took")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& faults =
      prometheus::BuildCounter()
          .Name("faultline_faults_injected_total")
          .Help("Faults the decorator applied, by kind")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& completions =
      prometheus::BuildCounter()
          .Name("faultline_completions_total")
          .Help("Work completions the scenarios' endpoints returned, by status")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& bytes =
      prometheus::BuildCounter()
          .Name("faultline_bytes_total")
          .Help("Bytes of successful completions: sent (sends, writes), received (receives, reads)")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& latency =
      prometheus::BuildHistogram()
          .Name("faultline_operation_latency_seconds")
          .Help("Time from a signaled post to its successful completion, by opcode")
          .Register(*registry);
  // faultline_infiniband_<node_exporter name>, made as counters show up.
  std::map<std::string, prometheus::Family<prometheus::Counter>*> infiniband;
  prometheus::Family<prometheus::Gauge>& agents =
      prometheus::BuildGauge()
          .Name("faultline_agent_up")
          .Help("1 while an agent is connected and healthy, 0 once lost")
          .Register(*registry);
  std::unique_ptr<prometheus::Exposer> exposer;
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;

prometheus::Registry& Metrics::registry() { return *impl_->registry; }

Status Metrics::serve(const std::string& listen) {
  const std::string address =
      listen.find(':') == std::string::npos ? "127.0.0.1:" + listen : listen;
  try {
    // Idle connections each hold a civetweb worker until their request times out: enough
    // workers, and a short timeout, keep a scrape answered with many idle sockets open.
    impl_->exposer = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", address, "num_threads", "32", "request_timeout_ms", "2000"});
  } catch (const std::exception& e) {
    return Error{ErrorCode::kIoError,
                 "cannot serve metrics on " + address + ": " + std::string(e.what())}
        .with_hint("another process may hold the port; pick another with --metrics-port");
  }
  impl_->exposer->RegisterCollectable(impl_->registry);
  return {};
}

int Metrics::port() const {
  if (!impl_->exposer) return 0;
  const auto ports = impl_->exposer->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

Status Metrics::push(const std::string& url, const std::string& job) const {
  // "http://host:port" -> host part (with its scheme) and port.
  const size_t colon = url.rfind(':');
  const size_t scheme = url.find("://");
  if (colon == std::string::npos || (scheme != std::string::npos && colon <= scheme + 2)) {
    return Error{ErrorCode::kInvalidArgument,
                 "--pushgateway " + url + ": expected http://HOST:PORT"};
  }
  std::string port = url.substr(colon + 1);
  while (!port.empty() && port.back() == '/') port.pop_back();
  try {
    prometheus::Gateway gateway(url.substr(0, colon), port, job);
    gateway.RegisterCollectable(impl_->registry);
    const int status = gateway.Push();
    if (status < 200 || status >= 300) {
      return Error{ErrorCode::kIoError, "the Pushgateway at " + url + " answered HTTP " +
                                            std::to_string(status) + " to the push"}
          .with_hint(status < 0 ? "nothing answered: is the Pushgateway running there?" : "");
    }
  } catch (const std::exception& e) {
    return Error{ErrorCode::kIoError, "pushing to " + url + ": " + std::string(e.what())};
  }
  return {};
}

void Metrics::count_scenario(const nlohmann::json& scenario, const std::string& suite,
                             const std::string& transport, const std::string& device) {
  const std::string id = scenario.value("id", std::string());
  impl_->scenarios
      .Add({{"suite", suite},
            {"scenario", id},
            {"verdict", scenario.value("verdict", std::string("error"))},
            {"transport", transport},
            {"device", device}})
      .Increment();
  impl_->durations.Add({{"suite", suite}, {"scenario", id}}, duration_buckets())
      .Observe(scenario.value("duration_ms", 0.0) / 1000);
  if (const auto sut = scenario.find("sut"); sut != scenario.end() && sut->is_object()) {
    impl_->programs.Add({{"suite", suite}, {"scenario", id}, {"verdict", text_at(*sut, "verdict")}})
        .Increment();
  }
  const nlohmann::json sides = scenario.value("sides", nlohmann::json::object());
  if (!sides.is_object()) return;
  // What each side reported, where it did (a lost or crashed side has no details).
  for (const auto& [agent, side] : sides.items()) {
    if (!side.is_object()) continue;
    const nlohmann::json details = side.value("details", nlohmann::json::object());
    count_faults(details);
    count_traffic(details);
  }
  count_port_counters(id, sides);
}

void Metrics::count_faults(const nlohmann::json& details) {
  const nlohmann::json::json_pointer applied_at("/faults/applied");
  if (!details.is_object() || !details.contains(applied_at) || !details.at(applied_at).is_array())
    return;
  for (const auto& fault : details.at(applied_at)) {
    const std::string kind = fault.is_object() ? fault.value("kind", "unknown") : "unknown";
    impl_->faults.Add({{"kind", kind}}).Increment();
  }
}

void Metrics::count_traffic(const nlohmann::json& details) {
  const nlohmann::json traffic =
      details.is_object() ? details.value("traffic", nlohmann::json()) : nlohmann::json();
  if (!traffic.is_object()) return;
  const nlohmann::json completions = traffic.value("completions", nlohmann::json());
  if (completions.is_object()) {
    for (const auto& [status, count] : completions.items())
      impl_->completions.Add({{"status", status}})
          .Increment(static_cast<double>(count_at(completions, status)));
  }
  const nlohmann::json bytes = traffic.value("bytes", nlohmann::json());
  for (const char* direction : {"sent", "received"})
    impl_->bytes.Add({{"direction", direction}})
        .Increment(static_cast<double>(count_at(bytes, direction)));
  const nlohmann::json latency = traffic.value("latency", nlohmann::json());
  if (!latency.is_object()) return;
  for (const auto& [op, histogram] : latency.items()) {
    const std::vector<double> increments = bucket_increments(histogram);
    if (increments.empty() || !histogram.value("sum_seconds", nlohmann::json()).is_number())
      continue;
    impl_->latency.Add({{"op", op}}, latency_bounds_seconds())
        .ObserveMultiple(increments, histogram.at("sum_seconds").get<double>());
  }
}

void Metrics::count_port_counters(const std::string& scenario, const nlohmann::json& sides) {
  for (const auto& [port, grown] : port_growth(sides)) {
    const auto& [host, device, number] = port;
    for (const auto& [counter, amount] : grown) {
      const InfinibandMetric metric = infiniband_metric(counter);
      if (metric.name.empty() || amount == 0) continue;
      auto family = impl_->infiniband.find(metric.name);
      if (family == impl_->infiniband.end()) {
        // A peer cannot make families without end: only counter files, and so many.
        if (impl_->infiniband.size() >= kMaxInfinibandFamilies ||
            (counter.rfind("hw_counters/", 0) != 0 && counter.rfind("counters/", 0) != 0))
          continue;
        family = impl_->infiniband
                     .emplace(metric.name, &prometheus::BuildCounter()
                                                .Name("faultline_infiniband_" + metric.name)
                                                .Help("Growth of the port counter during "
                                                      "scenarios (node_exporter's name)")
                                                .Register(*impl_->registry))
                     .first;
      }
      family->second
          ->Add({{"device", device},
                 {"port", std::to_string(number)},
                 {"scenario", scenario},
                 {"counter", counter}})
          .Increment(static_cast<double>(amount * metric.multiplier));
    }
  }
}

void Metrics::set_agent_up(const std::string& agent, bool up) {
  impl_->agents.Add({{"agent", agent}}).Set(up ? 1 : 0);
}

void MetricsSink::mark_agents(const nlohmann::json& report) {
  for (const auto& agent :
       report.value("run", nlohmann::json::object()).value("agents", nlohmann::json::array())) {
    metrics_.set_agent_up(agent.value("id", std::string()), !agent.value("lost", false));
  }
}

Status MetricsSink::on_run_started(const nlohmann::json& report) {
  mark_agents(report);
  return {};
}

Status MetricsSink::on_scenario_finished(const nlohmann::json& scenario,
                                         const nlohmann::json& report) {
  const nlohmann::json run = report.value("run", nlohmann::json::object());
  std::string transport = run.value("transport", std::string());
  if (!run.value("provider", std::string()).empty()) transport += "/" + run.value("provider", "");
  metrics_.count_scenario(scenario, suite_name(report), transport,
                          run.value("device", std::string()));
  return {};
}

Status MetricsSink::on_run_finished(const nlohmann::json& report) {
  mark_agents(report);
  return {};
}

}  // namespace faultline::reports
