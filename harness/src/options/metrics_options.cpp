#include "metrics_options.hpp"

#include <iostream>
#include <thread>

#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/base/metrics_plan.hpp"
#include "faultline/harness/base/net_address.hpp"
#include "option_checks.hpp"

namespace faultline::cli {

void MetricsOptions::add_to(CLI::App* app, bool with_push) {
  app->add_option("--metrics-port", listen,
                  "Serve Prometheus metrics on PORT (127.0.0.1) or ADDR:PORT");
  app->add_option("--metrics-linger", linger_seconds,
                  "Keep serving metrics this many seconds after the work is done")
      ->check(CLI::NonNegativeNumber);
  if (with_push) {
    app->add_option(
           "--pushgateway", pushgateway,
           "Push the metrics to this Pushgateway (http://HOST[:PORT][/PATH]) as the run goes, "
           "grouped by "
           "job, instance (this host) and suite")
        ->check(pushgateway_url());
  }
}

Result<std::unique_ptr<reports::Metrics>> MetricsOptions::start() const {
  if (listen.empty() && pushgateway.empty()) return std::unique_ptr<reports::Metrics>();
  auto metrics = std::make_unique<reports::Metrics>(harness::build_info());
  if (!listen.empty()) FAULTLINE_RETURN_IF_ERROR(metrics->serve(listen));
  if (!pushgateway.empty()) metrics->push_to(pushgateway, harness::host_name());
  return metrics;
}

int MetricsOptions::finish(const char* command, reports::Metrics* metrics, int code) const {
  if (metrics == nullptr) return code;
  if (auto pushed = metrics->finish(code == harness::kExitPass); !pushed.ok()) {
    std::cerr << "faultline " << command << ": " << pushed.error().describe_with_hint() << "\n";
    if (code == harness::kExitPass) code = harness::kExitHarnessError;
  }
  std::this_thread::sleep_for(std::chrono::seconds(linger_seconds));
  return code;
}

}  // namespace faultline::cli
