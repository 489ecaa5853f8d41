#include "faultline/harness/monitor/monitor.hpp"

#include <iostream>
#include <sstream>
#include <utility>

#include "faultline/core/printable_text.hpp"
#include "faultline/harness/base/exit_codes.hpp"
#include "faultline/harness/runs/report_document.hpp"
#include "faultline/reports/directory_lock.hpp"
#include "faultline/reports/monitor_metrics.hpp"
#include "faultline/reports/report_view.hpp"
#include "round_section.hpp"
#include "round_store.hpp"
#include "suspect_confirmation.hpp"

namespace faultline::harness::monitor {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Between rounds and during them: a lost agent is said as it goes.
class RoundObserver final : public RunObserver {
 public:
  void agent_lost(const AgentRecord& agent) override {
    std::cerr << "faultline monitor: " << agent.name << " (" << agent.id
              << ") left: " << agent.lost_reason << "\n";
  }
};

// "round 12: 15 pairs, 15 ok; no suspect" / "...; host busy (...): n2 0.93 ms, 2 of 5 pairs;
// suspect agent node3 (failed): ...".
std::string round_line(const nlohmann::json& section) {
  std::map<std::string, int> states;
  for (const auto& pair : section.at("pairs")) ++states[pair.at("state").get<std::string>()];
  std::ostringstream line;
  line << "round " << section.at("round").get<uint64_t>() << ": " << section.at("agents").size()
       << " agents, " << section.at("pairs").size() << " pairs";
  for (const auto& [state, count] : states) line << ", " << count << " " << state;
  if (section.contains("note")) line << " (" << section.at("note").get<std::string>() << ")";
  // "; host busy (waiting for a CPU, per round trip): n2 0.93 ms, 2 of 5 pairs; n4 ..."
  const char* between = "; host busy (waiting for a CPU, per round trip): ";
  for (const auto& busy : section.at("host_busy")) {
    line << std::exchange(between, "; ") << busy.at("agent").get<std::string>() << " "
         << reports::duration_words(busy.at("wait_seconds").get<double>()) << ", "
         << busy.at("pairs").get<size_t>() << " of " << busy.at("of").get<size_t>() << " pairs";
  }
  for (const auto& watched : section.at("watching")) {
    line << "; watching " << watched.at("kind").get<std::string>() << " "
         << watched.at("name").get<std::string>() << " (" << watched.at("rounds").get<size_t>()
         << " of " << section.at("confirm_rounds").get<size_t>() << " rounds)";
  }
  if (section.at("suspects").empty()) line << "; no suspect";
  for (const auto& suspect : section.at("suspects")) {
    line << "\n  suspect " << suspect.at("kind").get<std::string>() << " "
         << suspect.at("name").get<std::string>() << " (" << suspect.at("reason").get<std::string>()
         << "): " << suspect.at("evidence").get<std::string>();
  }
  return printable(line.str());  // agents' and their peers' words: shown, not obeyed
}

}  // namespace

void adapt_probe_deadlines(std::vector<ScenarioSpec>& scenarios,
                           const std::vector<ScenarioSpec>& given,
                           const std::vector<ScenarioRun>& runs) {
  constexpr auto kFloor = std::chrono::milliseconds(2000);
  constexpr double kFactor = 10;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    double slowest_ms = 0;
    for (const auto& run : runs)
      if (run.scenario == scenarios[i].id && run.verdict == Verdict::kPass)
        slowest_ms = std::max(slowest_ms, run.duration_ms);
    if (slowest_ms <= 0) continue;  // nothing measured: as it was
    const auto scaled = std::chrono::milliseconds(static_cast<int64_t>(slowest_ms * kFactor));
    scenarios[i].deadline =
        std::clamp(scaled, std::min(kFloor, given[i].deadline), given[i].deadline);
  }
}

int run_monitor(Coordinator& coordinator, const MonitorOptions& options,
                reports::MonitorMetrics* metrics, const std::atomic<bool>& stop) {
  auto lock = reports::DirectoryLock::acquire(options.report_dir);
  if (!lock.ok()) {
    std::cerr << "faultline monitor: " << lock.error().describe_with_hint() << "\n";
    return kExitUsage;
  }
  const RoundStore store(options.report_dir, options.keep_rounds);
  uint64_t round = store.last_round();
  if (round > 0)
    std::cerr << "faultline monitor: continuing after round " << round << " (" << options.report_dir
              << "/rounds)\n";
  RoundObserver observer;
  std::vector<ScenarioSpec> scenarios = options.scenarios;
  SuspectConfirmation confirmation(options.localization.confirm_rounds);
  const double interval_seconds = std::chrono::duration<double>(options.every).count();
  auto next = Clock::now();
  for (size_t done = 0; !stop && (options.rounds == 0 || done < options.rounds); ++done) {
    // Agents come and go between rounds; each slice lets `stop` end the wait.
    while (!stop && Clock::now() < next) {
      coordinator.idle(
          std::min<std::chrono::milliseconds>(
              std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()), 200ms),
          observer);
    }
    if (stop) break;
    // The next round starts one interval after this one did, or at once when a round
    // overran: rounds are late, never skipped.
    next = std::max(next + options.every, Clock::now());
    const auto started = Clock::now();
    const std::string started_at = utc_now();
    coordinator.forget_lost_agents();
    std::vector<ScenarioRun> runs;
    if (coordinator.agents().size() >= 2)
      runs = coordinator.run(scenarios, {options.seed, false, options.suite}, observer);
    adapt_probe_deadlines(scenarios, options.scenarios, runs);
    ++round;
    const RoundInput input = round_input(coordinator.agents(), runs);
    Localization found = localize(input.agents, input.pairs, options.localization);
    confirmation.confirm(found);
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    nlohmann::json section = round_section(round, started_at, seconds, input, found,
                                           options.localization, interval_seconds);
    ReportDocument document(coordinator,
                            {options.suite, coordinator.agents_target(), options.seed, false},
                            runs.size());
    for (const auto& run : runs) document.add(run);
    nlohmann::json report = document.json();
    report["monitor"] = section;
    if (metrics != nullptr) metrics->count_round(section);
    std::cout << round_line(section) << std::endl;
    if (auto written = store.write(round, report); !written.ok()) {
      std::cerr << "faultline monitor: cannot write round " << round << ": "
                << written.error().describe_with_hint() << "\n";
      return kExitHarnessError;
    }
  }
  return kExitPass;
}

}  // namespace faultline::harness::monitor
