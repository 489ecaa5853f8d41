#include "faultline/harness/scenario_child.hpp"

#include <iostream>

#include "faultline/harness/builtin_scenarios.hpp"
#include "faultline/harness/control/channel.hpp"
#include "faultline/harness/control/messages.hpp"

namespace faultline::harness {

int run_scenario_child(int fd) {
  using namespace std::chrono_literals;
  control::Channel channel(fd, "agent");
  auto assignment = channel.receive(30s);
  if (!assignment.ok()) {
    std::cerr << "faultline scenario-child: " << assignment.error().describe() << "\n";
    return 3;
  }
  if (auto valid = control::validate_message(assignment.value(), {"run_scenario"}); !valid.ok()) {
    std::cerr << "faultline scenario-child: " << valid.error().describe() << "\n";
    return 3;
  }
  const nlohmann::json& message = assignment.value();
  const uint64_t run_id = message.at("run_id");
  const BuiltinScenario* scenario = find_builtin_scenario(message.at("scenario"));
  ScenarioOutcome outcome;
  if (scenario == nullptr) {
    outcome = {Verdict::kError, "", "", "unknown scenario " + message.at("scenario").dump(), ""};
  } else {
    ScenarioLink link(channel, run_id,
                      std::chrono::milliseconds(message.at("deadline_ms").get<uint64_t>()));
    const auto& target = message.at("target");
    ScenarioContext context{link,
                            message.at("role"),
                            message.at("params"),
                            {target.value("transport", "ofi"), target.value("provider", ""),
                             target.value("device", "")}};
    outcome = scenario->run(context);
  }
  auto sent = channel.send_message("scenario_result", {{"run_id", run_id},
                                                       {"verdict", to_string(outcome.verdict)},
                                                       {"expected", outcome.expected},
                                                       {"observed", outcome.observed},
                                                       {"evidence", outcome.evidence},
                                                       {"hint", outcome.hint}});
  return sent.ok() ? 0 : 3;
}

}  // namespace faultline::harness
