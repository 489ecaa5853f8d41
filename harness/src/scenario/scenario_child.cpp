#include "faultline/harness/scenario/scenario_child.hpp"

#include <sys/prctl.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <iostream>

#include "faultline/harness/control/channel.hpp"
#include "faultline/harness/control/messages.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"
#include "faultline/harness/scenario/scenario_loader.hpp"
#include "faultline/harness/scenario/scenario_runner.hpp"

namespace faultline::harness {

namespace {

// The scenario document with the agent's own faults (its --fault-file) joined to the
// scenario's, for this side's role.
nlohmann::json document_with_agent_faults(const nlohmann::json& params) {
  nlohmann::json document = params.value("document", nlohmann::json());
  if (document.is_object() && params.contains("agent_faults")) {
    if (!document.contains("faults")) document["faults"] = nlohmann::json::array();
    for (nlohmann::json fault : params.at("agent_faults")) {
      fault["role"] = params.at("role_name");
      document["faults"].push_back(std::move(fault));
    }
  }
  return document;
}

// Runs the scenario the assignment names: a scenario file's document, or a built-in.
ScenarioOutcome run_assigned(ScenarioLink& link, const nlohmann::json& message,
                             const transports::Target& where) {
  const nlohmann::json& params = message.at("params");
  if (params.contains("document")) {
    const nlohmann::json document = document_with_agent_faults(params);
    const auto problems = scenario_schema_problems(document);
    if (!problems.empty()) {
      std::string lines;
      for (size_t i = 0; i < std::min<size_t>(problems.size(), 5); ++i)
        lines += (i == 0 ? "" : "; ") + problems[i];
      return {Verdict::kError, "",
              "the scenario from the coordinator breaks the scenario schema, so none of it ran: " +
                  lines,
              "", "the coordinator runs another faultline version, or is not faultline"};
    }
    return run_scenario_document(link, document, params.at("role_name"),
                                 params.value("seed", uint64_t{0}), where,
                                 params.value("rank", size_t{0}), params.value("size", size_t{2}));
  }
  if (const BuiltinScenario* scenario = find_builtin_scenario(message.at("scenario"))) {
    ScenarioContext context{link, message.at("role"), params, where};
    return scenario->run(context);
  }
  return {Verdict::kError, "", "unknown scenario " + message.at("scenario").dump(), "", ""};
}

}  // namespace

int run_scenario_child(int fd, std::optional<int> priority) {
  using namespace std::chrono_literals;
  control::Channel channel(fd, "agent");
  // Started ahead of its scenario (a spare), it waits as long as its agent lives (a dead
  // agent's children die with it).
  auto assignment = channel.receive(24h);
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
  // `ps` (and the harness's tests) tell a child running a scenario from a spare by its name.
  prctl(PR_SET_NAME, "fl-scenario");
  if (priority && setpriority(PRIO_PROCESS, 0, *priority) != 0) {
    std::cerr << "faultline scenario-child: setpriority " << *priority << ": "
              << std::strerror(errno) << "; the scenario runs at the spare's low priority\n";
  }
  const auto& target = message.at("target");
  const transports::Target where{target.value("transport", "ofi"), target.value("provider", ""),
                                 target.value("device", "")};
  CoordinatorLink link(channel, run_id,
                       std::chrono::milliseconds(message.at("deadline_ms").get<uint64_t>()));
  ScenarioOutcome outcome;
  try {
    outcome = run_assigned(link, message, where);
  } catch (const nlohmann::json::exception& e) {
    outcome = {Verdict::kError, "", std::string("malformed scenario: ") + e.what(), "", ""};
  }
  nlohmann::json result = {{"run_id", run_id},
                           {"verdict", to_string(outcome.verdict)},
                           {"expected", outcome.expected},
                           {"observed", outcome.observed},
                           {"evidence", outcome.evidence},
                           {"hint", outcome.hint},
                           {"details", outcome.details}};
  if (outcome.dies_by != 0) result["died"] = std::string("SIG") + sigabbrev_np(outcome.dies_by);
  auto sent = channel.send_message("scenario_result", result);
  // As the scenario asked: the process ends as a crash ends it, its endpoint still open.
  if (outcome.dies_by != 0) raise(outcome.dies_by);
  return sent.ok() ? 0 : 3;
}

}  // namespace faultline::harness
