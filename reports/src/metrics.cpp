#include "faultline/reports/metrics.hpp"

#include <algorithm>

#include <map>
#include <optional>
#include <tuple>

#include "faultline/core/latency_buckets.hpp"
#include "faultline/reports/infiniband_names.hpp"
#include "faultline/reports/report_view.hpp"
#include "metrics_impl.hpp"

namespace faultline::reports {

namespace {

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

// A label's value: never empty (an empty label is no label to Prometheus).
std::string label(const std::string& text, const char* otherwise = "none") {
  return text.empty() ? otherwise : text;
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

const std::vector<std::string>& values_of(const MetricsPlan& plan, const std::string& name) {
  static const std::vector<std::string> none;
  const auto found = plan.label_values.find(name);
  return found != plan.label_values.end() ? found->second : none;
}

}  // namespace

const prometheus::Histogram::BucketBoundaries& duration_bounds() {
  static const prometheus::Histogram::BucketBoundaries bounds = {0.1, 0.25, 0.5, 1,  2.5,
                                                                 5,   10,   30,  60, 300};
  return bounds;
}

Metrics::Impl::Impl()
    : scenarios(prometheus::BuildCounter()
                    .Name("faultline_scenarios_total")
                    .Help("Scenario runs finished, by verdict")
                    .Register(*registry)),
      programs(prometheus::BuildCounter()
                   .Name("faultline_sut_verdicts_total")
                   .Help("SUT scenarios finished, by how the judged program reacted to its faults")
                   .Register(*registry)),
      sweep_points(prometheus::BuildCounter()
                       .Name("faultline_sweep_points_total")
                       .Help("A sweep's fault points, by how the program reacted")
                       .Register(*registry)),
      durations(prometheus::BuildHistogram()
                    .Name("faultline_scenario_duration_seconds")
                    .Help("How long scenario runs took (each run's own is in report.json)")
                    .Register(*registry)),
      faults(prometheus::BuildCounter()
                 .Name("faultline_faults_injected_total")
                 .Help("Faults the decorator applied, by kind")
                 .Register(*registry)),
      completions(prometheus::BuildCounter()
                      .Name("faultline_completions_total")
                      .Help("Work completions the scenarios' endpoints returned, by status")
                      .Register(*registry)),
      bytes(prometheus::BuildCounter()
                .Name("faultline_bytes_total")
                .Help("Bytes of successful completions: sent (sends, writes), received "
                      "(receives, reads)")
                .Register(*registry)),
      latency(prometheus::BuildHistogram()
                  .Name("faultline_operation_latency_seconds")
                  .Help("Time from a signaled post to its successful completion, by opcode")
                  .Register(*registry)),
      agents(prometheus::BuildGauge()
                 .Name("faultline_agent_up")
                 .Help("1 while a run's agent is connected, 0 once lost or the run ended")
                 .Register(*registry)),
      agents_lost(prometheus::BuildCounter()
                      .Name("faultline_agents_lost_total")
                      .Help("Agents lost during runs (connection dropped or silent)")
                      .Register(*registry)),
      last_success(prometheus::BuildGauge()
                       .Name("faultline_last_success_timestamp_seconds")
                       .Help("When a run of the suite last passed (Unix time)")
                       .Register(*registry)),
      build_info(prometheus::BuildGauge()
                     .Name("faultline_build_info")
                     .Help("The faultline build: 1, with its version and transports")
                     .Register(*registry)) {}

prometheus::Family<prometheus::Counter>* Metrics::Impl::infiniband_family(const std::string& name) {
  if (auto found = infiniband.find(name); found != infiniband.end()) return found->second;
  // A peer cannot make families without end.
  if (infiniband.size() >= kMaxInfinibandFamilies) return nullptr;
  auto& family = prometheus::BuildCounter()
                     .Name("faultline_infiniband_" + name)
                     .Help("Growth of the port counter during scenarios (node_exporter's name)")
                     .Register(*registry);
  infiniband.emplace(name, &family);
  return &family;
}

Metrics::Metrics(const BuildInfo& build) : impl_(std::make_unique<Impl>()) {
  impl_->build_info
      .Add({{"version", label(build.version, "unknown")}, {"transports", label(build.transports)}})
      .Set(1);
  impl_->agents_lost.Add({});
}
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

void Metrics::prepare(const MetricsPlan& plan) {
  Impl& m = *impl_;
  const std::string transport = label(plan.transport);
  const std::string device = label(plan.device, "default");
  for (const auto& scenario : plan.scenarios) {
    for (const auto& verdict : values_of(plan, "verdict")) {
      m.scenarios.Add({{"suite", plan.suite},
                       {"scenario", scenario},
                       {"verdict", verdict},
                       {"transport", transport},
                       {"device", device}});
    }
    if (!plan.sut) continue;
    for (const auto& verdict : values_of(plan, "sut_verdict"))
      m.programs.Add({{"suite", plan.suite}, {"scenario", scenario}, {"verdict", verdict}});
  }
  if (plan.sweep)
    for (const char* verdict :
         {"pass", "detected", "masked", "hang", "undetected", "silent-corruption", "crashed",
          "not-reached", "fail", "error", "not-run"})
      m.sweep_points.Add({{"verdict", verdict}});
  if (!plan.suite.empty()) m.durations.Add({{"suite", plan.suite}}, duration_bounds());
  for (const auto& kind : values_of(plan, "kind")) m.faults.Add({{"kind", kind}});
  for (const auto& status : values_of(plan, "status")) m.completions.Add({{"status", status}});
  for (const char* direction : {"sent", "received"}) m.bytes.Add({{"direction", direction}});
  for (const auto& op : values_of(plan, "op"))
    m.latency.Add({{"op", op}}, latency_bounds_seconds());
}

void Metrics::count_scenario(const nlohmann::json& scenario, const std::string& suite,
                             const std::string& transport, const std::string& device) {
  const std::string id = scenario.value("id", std::string());
  impl_->scenarios
      .Add({{"suite", suite},
            {"scenario", id},
            {"verdict", scenario.value("verdict", std::string("error"))},
            {"transport", label(transport)},
            {"device", label(device, "default")}})
      .Increment();
  impl_->durations.Add({{"suite", suite}}, duration_bounds())
      .Observe(scenario.value("duration_ms", 0.0) / 1000);
  const auto sut = scenario.find("sut");
  const bool judged = sut != scenario.end() && sut->is_object();
  const nlohmann::json tags = scenario.value("tags", nlohmann::json::array());
  if (std::find(tags.begin(), tags.end(), "sweep") != tags.end()) {
    impl_->sweep_points.Add({{"verdict", judged ? label(text_at(*sut, "verdict")) : "not-run"}})
        .Increment();
  } else if (judged) {
    impl_->programs
        .Add({{"suite", suite}, {"scenario", id}, {"verdict", label(text_at(*sut, "verdict"))}})
        .Increment();
  }
  const nlohmann::json sides = scenario.value("sides", nlohmann::json::object());
  if (sides.is_object()) {
    // What each side reported, where it did (a lost or crashed side has no details).
    for (const auto& [agent, side] : sides.items()) {
      if (!side.is_object()) continue;
      const nlohmann::json details = side.value("details", nlohmann::json::object());
      count_faults(details);
      count_traffic(details);
    }
    count_port_counters(id, sides);
  }
  push_if_due();
}

void Metrics::count_faults(const nlohmann::json& details) {
  const nlohmann::json::json_pointer applied_at("/faults/applied");
  if (!details.is_object() || !details.contains(applied_at) || !details.at(applied_at).is_array())
    return;
  for (const auto& fault : details.at(applied_at)) {
    const std::string kind = fault.is_object() ? fault.value("kind", "unknown") : "unknown";
    impl_->faults.Add({{"kind", label(kind, "unknown")}}).Increment();
  }
}

void Metrics::count_traffic(const nlohmann::json& details) {
  const nlohmann::json traffic =
      details.is_object() ? details.value("traffic", nlohmann::json()) : nlohmann::json();
  if (!traffic.is_object()) return;
  const nlohmann::json completions = traffic.value("completions", nlohmann::json());
  if (completions.is_object()) {
    for (const auto& [status, count] : completions.items())
      impl_->completions.Add({{"status", label(status, "unknown")}})
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
    if (op.empty() || increments.empty() ||
        !histogram.value("sum_seconds", nlohmann::json()).is_number())
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
      // Only counter files.
      if (counter.rfind("hw_counters/", 0) != 0 && counter.rfind("counters/", 0) != 0) continue;
      auto* family = impl_->infiniband_family(metric.name);
      if (family == nullptr) continue;
      family
          ->Add({{"device", label(device, "unknown")},
                 {"port", std::to_string(number)},
                 {"scenario", label(scenario, "unknown")},
                 {"counter", counter}})
          .Increment(static_cast<double>(amount * metric.multiplier));
    }
  }
}

void Metrics::set_agent_up(const std::string& agent, bool up) {
  impl_->agent_names.insert(label(agent, "unknown"));
  impl_->agents.Add({{"agent", label(agent, "unknown")}}).Set(up ? 1 : 0);
}

void Metrics::count_agent_lost() { impl_->agents_lost.Add({}).Increment(); }

std::string metrics_transport(const nlohmann::json& report) {
  const nlohmann::json run = report.value("run", nlohmann::json::object());
  std::string transport = run.value("transport", std::string());
  if (!run.value("provider", std::string()).empty()) transport += "/" + run.value("provider", "");
  return label(transport);
}

std::string metrics_device(const nlohmann::json& report) {
  return label(report.value("run", nlohmann::json::object()).value("device", std::string()),
               "default");
}

Status MetricsSink::on_run_started(const nlohmann::json& report) {
  MetricsPlan plan = plan_;
  plan.suite = suite_name(report);
  plan.transport = metrics_transport(report);
  plan.device = metrics_device(report);
  // Up before the run's first push, so the Pushgateway shows them up while the run goes.
  for (const auto& agent :
       report.value("run", nlohmann::json::object()).value("agents", nlohmann::json::array())) {
    if (!agent.is_object()) continue;
    metrics_.set_agent_up(agent.value("name", agent.value("id", std::string())),
                          !agent.value("lost", false));
  }
  metrics_.start_run(plan);
  return {};
}

Status MetricsSink::on_scenario_finished(const nlohmann::json& scenario,
                                         const nlohmann::json& report) {
  metrics_.count_scenario(scenario, suite_name(report), metrics_transport(report),
                          metrics_device(report));
  return {};
}

Status MetricsSink::on_run_finished(const nlohmann::json& /*report*/) {
  metrics_.end_run();
  return {};
}

}  // namespace faultline::reports
