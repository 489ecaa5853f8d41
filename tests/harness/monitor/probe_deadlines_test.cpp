// Each round's probe deadlines follow what the last round measured, so a peer that never
// answers holds its pairs seconds, not the configured half minute each.
#include <catch2/catch.hpp>

#include "faultline/harness/monitor/monitor.hpp"

using namespace faultline::harness;
using namespace std::chrono_literals;

TEST_CASE("a probe's deadline is ten times its slowest passing run, from 2 s to the configured",
          "[unit]") {
  ScenarioSpec probe;
  probe.id = "probe";
  probe.deadline = 30s;
  const std::vector<ScenarioSpec> given = {probe};
  const auto run = [](double ms, Verdict verdict) {
    ScenarioRun one;
    one.scenario = "probe";
    one.duration_ms = ms;
    one.verdict = verdict;
    return one;
  };
  std::vector<ScenarioSpec> next = given;
  monitor::adapt_probe_deadlines(
      next, given,
      {run(300, Verdict::kPass), run(800, Verdict::kPass), run(30000, Verdict::kTimeout)});
  CHECK(next[0].deadline == 8000ms);  // the timed-out pair does not stretch it
  monitor::adapt_probe_deadlines(next, given, {run(20, Verdict::kPass)});
  CHECK(next[0].deadline == 2000ms);
  monitor::adapt_probe_deadlines(next, given, {run(9000, Verdict::kPass)});
  CHECK(next[0].deadline == 30s);
  const std::vector<ScenarioSpec> before = next;
  monitor::adapt_probe_deadlines(next, given, {run(30000, Verdict::kTimeout)});
  CHECK(next[0].deadline == before[0].deadline);  // nothing measured: as it was
}
