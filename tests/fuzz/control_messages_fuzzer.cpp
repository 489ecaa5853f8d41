// One control message as JSON text: validated for every receiver state, and what a receiver
// does with a valid one that it reads beyond the schema (an agent's metrics from run_result).
#include <nlohmann/json.hpp>

#include "faultline/harness/control/messages.hpp"
#include "faultline/reports/metrics.hpp"
#include "fuzz_input.hpp"

using faultline::harness::control::validate_message;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto message = nlohmann::json::parse(data, data + size, nullptr, false);
  if (message.is_discarded()) return 0;
  (void)validate_message(message, {"challenge"});
  (void)validate_message(message, {"welcome", "reject"});
  (void)validate_message(message, {"auth"});
  (void)validate_message(message,
                         {"heartbeat", "endpoint_info", "barrier", "step", "scenario_result"});
  if (validate_message(message, {"run_result"}).ok()) {
    faultline::reports::Metrics metrics;
    metrics.count_scenario(message, message.at("suite"), "ofi/tcp", "lo");
  }
  return 0;
}
