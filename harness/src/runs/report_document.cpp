#include "faultline/harness/runs/report_document.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <map>

#include "faultline/harness/base/net_address.hpp"
#include "faultline/harness/control/peer_record_checks.hpp"

namespace faultline::harness {

namespace {

std::string kernel_release() {
  utsname name{};
  uname(&name);
  return std::string(name.sysname) + " " + name.release;
}

}  // namespace

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

nlohmann::json this_machine_as_agent(const transports::Target& target) {
  return nlohmann::json::array({{{"id", "local"},
                                 {"host", host_name()},
                                 {"pid", getpid()},
                                 {"target",
                                  {{"transport", target.transport},
                                   {"provider", target.provider},
                                   {"device", target.device}}},
                                 {"devices", nlohmann::json::array()}}});
}

nlohmann::json scenario_to_json(const ScenarioRun& run) {
  return {{"id", run.scenario},
          {"tags", run.tags},
          {"source", run.source},
          {"sha256", run.sha256},
          {"seed", run.seed},
          {"run_id", run.run_id},
          {"round", run.round},
          {"agents",
           {{"initiator", run.initiator},
            {"responder", run.responder},
            {"ranks", run.agents},
            {"targets", run.targets}}},
          {"verdict", to_string(run.verdict)},
          {"expected", run.expected},
          {"observed", run.observed},
          {"evidence", run.evidence},
          {"hint", run.hint},
          {"duration_ms", run.duration_ms},
          {"sides", run.sides}};
}

namespace {

nlohmann::json agents_of(const Coordinator& coordinator) {
  nlohmann::json agents = nlohmann::json::array();
  for (const auto& agent : coordinator.agents()) {
    nlohmann::json record = agent_record_of(agent.hello, agent.id, agent.remote);
    record["name"] = agent.name;
    record["lost"] = agent.lost;
    record["lost_reason"] = agent.lost_reason;
    agents.push_back(std::move(record));
  }
  return agents;
}

}  // namespace

ReportDocument::ReportDocument(const Coordinator& coordinator, const RunMetadata& metadata,
                               size_t total)
    : ReportDocument(agents_of(coordinator), metadata, total) {}

ReportDocument::ReportDocument(nlohmann::json agents, const RunMetadata& metadata, size_t total)
    : total_(total) {
  const std::string started = utc_now();
  document_ = {{"schema_version", 2},
               {"faultline_version", FAULTLINE_VERSION},
               {"run",
                {{"suite", metadata.suite},
                 {"started_at", started},
                 {"updated_at", started},
                 {"complete", total == 0},
                 {"host", host_name()},
                 {"kernel", kernel_release()},
                 {"transport", metadata.target.transport},
                 {"provider", metadata.target.provider},
                 {"device", metadata.target.device},
                 {"seed", metadata.seed},
                 {"strict", metadata.strict},
                 {"agents", std::move(agents)}}},
               {"summary", nlohmann::json::object()},
               {"scenarios", nlohmann::json::array()}};
  refresh();
}

const nlohmann::json& ReportDocument::add(const ScenarioRun& run) {
  return add(scenario_to_json(run));
}

const nlohmann::json& ReportDocument::add(nlohmann::json scenario) {
  ++verdict_counts_[scenario.at("verdict").get<std::string>()];
  document_["scenarios"].push_back(std::move(scenario));
  refresh();
  return document_["scenarios"].back();
}

void ReportDocument::refresh() {
  const size_t finished = document_["scenarios"].size();
  document_["summary"] = {{"total", total_}, {"finished", finished}, {"verdicts", verdict_counts_}};
  document_["run"]["updated_at"] = utc_now();
  document_["run"]["complete"] = finished == total_;
}

}  // namespace faultline::harness
