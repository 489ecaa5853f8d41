// A SUT scenario as a program job, and its outcome back from the job's.
#include "faultline/harness/sut/sut_jobs.hpp"

#include <algorithm>

#include "faultline/harness/base/strict_json.hpp"

namespace faultline::harness::sut {

using nlohmann::json;

ProgramJob program_job(const SutScenario& scenario) {
  ProgramJob job{
      scenario.name,         scenario.needs, {}, scenario.judged, scenario.deadline_seconds,
      scenario.grace_seconds};
  for (const SutRole& role : scenario.roles) {
    job.roles.push_back(
        {role.name,
         static_cast<uint32_t>(std::max(role.after_ms, 0)),
         {{"scenario", scenario.name}, {"sha256", scenario.sha256}, {"role", role.name}},
         role.listens});
  }
  return job;
}

ScenarioOutcome scenario_outcome(const SutScenario& scenario, const ProgramJobOutcome& job) {
  ScenarioOutcome outcome = ScenarioOutcome::of(scenario);
  if (!job.unplaced_result.empty()) {
    outcome.result = job.unplaced_result;
    outcome.reason = job.unplaced_reason;
    if (outcome.result == "skip") outcome.reason += " (agents run SUT roles with --sut-scenarios)";
    return outcome;
  }
  for (const auto& role : scenario.roles) {
    const auto agent = job.agents.find(role.name);
    json summary;
    if (const auto sent = job.summaries.find(role.name); sent != job.summaries.end()) {
      // Checked as any peer data: only the report schema's values come out.
      summary = role_summary(sent->second, text_at(sent->second, "log"));
    } else {
      const auto why = job.errors.find(role.name);
      summary = {{"verdict", "error"},
                 {"seconds", 0},
                 {"faults_applied", 0},
                 {"evidence", why != job.errors.end() ? why->second : "no result"}};
    }
    if (agent != job.agents.end()) summary["agent"] = agent->second;
    outcome.roles[role.name] = std::move(summary);
  }
  outcome.seconds = job.seconds;
  outcome.judge();
  return outcome;
}

}  // namespace faultline::harness::sut
