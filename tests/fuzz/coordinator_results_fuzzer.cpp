// What the coordinator does with a scenario_result from an authenticated agent: the message
// checked, the side it becomes checked against the report's schema, and, when it passes, the
// side in a report rendered in every format and counted in the metrics (where a details of the
// wrong type once ended the coordinator with a type_error).
#include <nlohmann/json.hpp>

#include "faultline/harness/control/messages.hpp"
#include "faultline/harness/control/peer_record_checks.hpp"
#include "faultline/harness/runs/report_document.hpp"
#include "faultline/reports/formats.hpp"
#include "faultline/reports/metrics.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto message = nlohmann::json::parse(data, data + size, nullptr, false);
  if (message.is_discarded()) return 0;
  if (!faultline::harness::control::validate_message(message, {"scenario_result"}).ok()) return 0;
  auto side = faultline::harness::side_from_result(message);
  if (!side.ok()) return 0;
  faultline::harness::ScenarioRun run;
  run.scenario = "fuzz.result";
  run.agents = {"agent-1", "agent-2"};
  run.initiator = "agent-1";
  run.responder = "agent-2";
  run.verdict = faultline::harness::Verdict::kError;
  run.sides = {{"agent-1", side.value()}};
  faultline::harness::ReportDocument report(nlohmann::json::array(), {"fuzz", {"ofi", "tcp", "lo"}},
                                            1);
  (void)report.add(run);
  const nlohmann::json& document = report.json();
  (void)faultline::reports::to_markdown(document);
  (void)faultline::reports::to_junit(document);
  (void)faultline::reports::to_html(document);
  faultline::reports::Metrics metrics;
  metrics.count_scenario(document.at("scenarios").at(0), "fuzz", "ofi/tcp", "lo");
  return 0;
}
