#include "faultline/reports/metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gateway.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "faultline/reports/report_view.hpp"

namespace faultline::reports {

using transports::Error;
using transports::ErrorCode;

namespace {

// Scenario runs take from a tenth of a second to minutes.
prometheus::Histogram::BucketBoundaries duration_buckets() {
  return {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
}

}  // namespace

struct Metrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& scenarios =
      prometheus::BuildCounter()
          .Name("faultline_scenarios_total")
          .Help("Scenario runs finished, by verdict")
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

transports::Status Metrics::serve(const std::string& listen) {
  const std::string address =
      listen.find(':') == std::string::npos ? "127.0.0.1:" + listen : listen;
  try {
    impl_->exposer = std::make_unique<prometheus::Exposer>(address);
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

transports::Status Metrics::push(const std::string& url, const std::string& job) const {
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
  // Each side's details.faults.applied, where a side has them (an agent that was lost has
  // no details).
  const nlohmann::json::json_pointer applied_at("/details/faults/applied");
  const nlohmann::json sides = scenario.value("sides", nlohmann::json::object());
  for (const auto& [agent, side] : sides.items()) {
    if (!side.contains(applied_at) || !side.at(applied_at).is_array()) continue;
    for (const auto& fault : side.at(applied_at)) {
      const std::string kind = fault.is_object() ? fault.value("kind", "unknown") : "unknown";
      impl_->faults.Add({{"kind", kind}}).Increment();
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

transports::Status MetricsSink::on_run_started(const nlohmann::json& report) {
  mark_agents(report);
  return {};
}

transports::Status MetricsSink::on_scenario_finished(const nlohmann::json& scenario,
                                                     const nlohmann::json& report) {
  const nlohmann::json run = report.value("run", nlohmann::json::object());
  std::string transport = run.value("transport", std::string());
  if (!run.value("provider", std::string()).empty()) transport += "/" + run.value("provider", "");
  metrics_.count_scenario(scenario, suite_name(report), transport,
                          run.value("device", std::string()));
  return {};
}

transports::Status MetricsSink::on_run_finished(const nlohmann::json& report) {
  mark_agents(report);
  return {};
}

}  // namespace faultline::reports
