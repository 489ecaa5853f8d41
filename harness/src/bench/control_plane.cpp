#include "faultline/harness/bench/control_plane.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "faultline/harness/runs/local_run.hpp"
#include "faultline/harness/scenario/scenario_loader.hpp"
#include "statistics.hpp"

namespace faultline::harness::bench {

using Clock = std::chrono::steady_clock;

namespace {

// A pair scenario of `barriers` barrier steps and nothing else.
Result<ScenarioSpec> barrier_scenario(size_t barriers) {
  nlohmann::json steps = nlohmann::json::array();
  for (size_t i = 0; i < barriers; ++i)
    steps.push_back({{"op", "barrier"}, {"name", "b" + std::to_string(i)}});
  const nlohmann::json document = {
      {"id", "bench.barriers-" + std::to_string(barriers)},
      {"title", std::to_string(barriers) + " barriers and no traffic"},
      {"tags", {"bench"}},
      {"references", nlohmann::json::array()},
      {"roles", {{"initiator", nlohmann::json::object()}, {"responder", nlohmann::json::object()}}},
      {"steps", steps}};
  std::vector<LoadProblem> problems;
  auto spec = load_scenario_text("bench.barriers", document.dump(), {}, problems);
  if (!spec)
    return Error{ErrorCode::kInternal,
                 "the benchmark scenario does not load: " + problems.front().describe()};
  return *spec;
}

// Runs `scenarios` on `agents` into a scratch directory; the duration of every run, in
// milliseconds, by scenario id.
Result<std::map<std::string, std::vector<double>>> run_and_time(
    LocalAgents& agents, const std::vector<ScenarioSpec>& scenarios,
    const transports::Target& target, const std::filesystem::path& report_dir) {
  std::ostringstream progress;
  const int code =
      agents.run(scenarios, report_dir.string(), {"bench", target, 1, false}, progress, nullptr);
  std::ifstream file(report_dir / "report.json");
  const auto report = nlohmann::json::parse(file, nullptr, false);
  if (code != 0 || report.is_discarded())
    return Error{ErrorCode::kInternal, "a no-traffic benchmark run did not pass (exit " +
                                           std::to_string(code) + "):\n" + progress.str()};
  std::map<std::string, std::vector<double>> durations;
  for (const auto& run : report.at("scenarios"))
    durations[run.at("id").get<std::string>()].push_back(run.at("duration_ms").get<double>());
  return durations;
}

}  // namespace

Result<ControlPlaneResult> run_control_plane(const ControlPlaneOptions& options) {
  if (options.agents < 2 || options.barriers == 0 || options.repetitions == 0)
    return Error{ErrorCode::kInvalidArgument,
                 "expected at least 2 agents, 1 barrier and 1 repetition"};
  auto one = barrier_scenario(1);
  if (!one.ok()) return one.error();
  auto many = barrier_scenario(1 + options.barriers);
  if (!many.ok()) return many.error();
  const auto scratch =
      std::filesystem::temp_directory_path() / ("faultline-bench-" + std::to_string(::getpid()));
  struct RemoveScratch {
    std::filesystem::path path;
    ~RemoveScratch() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } remove_scratch{scratch};

  ControlPlaneResult result;
  {
    auto pair = LocalAgents::start({.agents = 2}, options.target);
    if (!pair.ok()) return pair.error();
    std::vector<double> per_step;
    std::vector<double> fixed;
    for (size_t r = 0; r < options.repetitions; ++r) {
      auto timed = run_and_time(*pair.value(), {one.value(), many.value()}, options.target,
                                scratch / ("steps-" + std::to_string(r)));
      if (!timed.ok()) return timed.error();
      const double base = timed.value()[one->id].at(0);
      const double with_steps = timed.value()[many->id].at(0);
      fixed.push_back(base);
      per_step.push_back((with_steps - base) / static_cast<double>(options.barriers));
    }
    result.step_round_trip_ms = percentile(per_step, 0.5);
    result.run_without_steps_ms = percentile(fixed, 0.5);
  }
  const auto joining = Clock::now();
  auto all = LocalAgents::start({.agents = options.agents}, options.target);
  if (!all.ok()) return all.error();
  result.agents = options.agents;
  result.join_seconds = std::chrono::duration<double>(Clock::now() - joining).count();
  const auto scheduling = Clock::now();
  auto timed = run_and_time(*all.value(), {one.value()}, options.target, scratch / "all-pairs");
  if (!timed.ok()) return timed.error();
  result.all_pairs_seconds = std::chrono::duration<double>(Clock::now() - scheduling).count();
  result.pair_runs = timed.value()[one->id].size();
  return result;
}

}  // namespace faultline::harness::bench
