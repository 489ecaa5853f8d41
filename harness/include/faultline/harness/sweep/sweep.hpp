#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/devices/device_profiles.hpp"
#include "faultline/harness/sut/fault_points.hpp"
#include "faultline/harness/sut/sut_exec.hpp"

namespace faultline::reports {
class Metrics;
}

namespace faultline::harness::sweep {

/// `faultline sut sweep`: a clean run maps the program's call sites, then the program runs
/// once per fault point (docs/testing-your-own-stack.md, "Sweeping every fault point").
struct SweepOptions {
  std::vector<std::string> command;  ///< `{run}` in an argument: the run's own number
  bool every_occurrence = false;     ///< --points all: every occurrence, not first/middle/last
  uint64_t seed = 1;                 ///< which middle occurrence
  std::vector<DeviceProfile> profiles;
  unsigned jobs = 1;
  std::optional<std::chrono::milliseconds> budget;  ///< no new point starts after it
  size_t max_points = 0;                            ///< 0: every point
  std::optional<double> deadline_seconds;           ///< per point; default from the clean run
  sut::Checker checker;
  std::string faultline_binary;  ///< each run is `faultline sut exec`
  std::string report_dir;
  unsigned shard_index = 1;  ///< this shard's points: those whose number is index - 1 mod count
  unsigned shard_count = 1;
  /// Verdicts beyond detected and masked that do not fail the sweep (--allow hang: a known
  /// weakness of the stack); their points are xfail in the report.
  std::vector<std::string> allow;
  /// Standing faults (--with) under the clean run and every point: the conditions, not judged.
  nlohmann::json standing = nlohmann::json::array();
  /// --partial-ok: points the budget left unrun fail nothing (exit 0, not 4).
  bool partial_ok = false;
};

/// The points to try: each family at each site (first, middle, last occurrence, or all), and
/// for each profile the program on that NIC and one point per limit the clean run's `request`
/// events exceed. In a stable order that takes the families in turn, first occurrences first,
/// so a sweep cut short has tried every family.
std::vector<sut::FaultPoint> choose_points(const std::vector<sut::CallSite>& sites,
                                           const std::vector<nlohmann::json>& requests,
                                           const SweepOptions& options);

/// One point's run: its number among all points (its folder, points/NUMBER), and how the
/// program ended (its summary as report.json holds a role: verdict, seconds, evidence, ...);
/// no summary when the budget ran out before it.
struct PointRun {
  sut::FaultPoint point;
  size_t number = 0;
  std::optional<nlohmann::json> summary;  ///< none: not run
  std::string not_run;                    ///< why it has none ("" : the budget ran out)
};

struct SweepResult {
  nlohmann::json clean = nlohmann::json::object();  ///< the clean run's summary
  std::vector<sut::CallSite> sites;
  std::vector<PointRun> runs;  ///< this shard's points, in order
  size_t points_total = 0;     ///< every point of the program, before shard and --max-points
  std::string stopped;         ///< why points were left out (budget), or empty
  double seconds = 0;
};

/// Told of the sweep as it goes: once the clean run mapped the points (`point` null), then after
/// each point (`point`: its run). An error stops the sweep (no point starts after it).
using SweepProgress = std::function<Status(const SweepResult& result, const PointRun* point)>;

/// The clean run under `observe` (its verdict must be `pass`, or the sweep stops there with
/// why), then every chosen point of this shard, `jobs` at a time, a line each on `progress`.
Result<SweepResult> run_sweep(const SweepOptions& options, std::ostream& progress,
                              const SweepProgress& on_progress);

/// The report's `sweep` section (reports/schema/report.schema.json): the program, the clean
/// run, the sites, each point with its verdict, the score.
nlohmann::json sweep_section(const SweepResult& result, const SweepOptions& options);

/// "N fault points: detected A, masked B, hang C, ..." over a section's points.
std::string score_line(const nlohmann::json& section);

/// The points of `section` whose verdict differs from `baseline`'s (a sweep section of an
/// earlier report): id, name, before and after; a point only one of them has is listed too.
nlohmann::json changes_since(const nlohmann::json& baseline, const nlohmann::json& section);

/// Shards' sections as one (`--collect`): their points together, in point number order; the
/// sites and clean run of the first. Errors name the shard whose section is missing or of
/// another program.
Result<nlohmann::json> merge_sections(const std::vector<nlohmann::json>& sections,
                                      const std::vector<std::string>& origins);

/// A sweep's report directory, written as the sweep goes: report.json (one scenario per point,
/// tagged `sweep`, and the `sweep` section), junit.xml (one testcase per point, named by site,
/// family and occurrence: the same from run to run), summary.md (the score and the matrix) and
/// the metrics (faultline_sweep_points_total{verdict}); at the end sut.json (sweep_outcome).
/// Each write is atomic; one that fails is the error of the call.
class SweepReport {
 public:
  SweepReport(std::string report_dir, reports::Metrics* metrics);
  ~SweepReport();
  SweepReport(const SweepReport&) = delete;
  SweepReport& operator=(const SweepReport&) = delete;

  /// `write`: the files now (a sweep that runs), or only at finish (shards collected).
  Status start(const nlohmann::json& section, bool write = true);
  Status add_point(const nlohmann::json& section, const nlohmann::json& point);
  /// Every point of a finished section at once (--collect): the files are written by finish.
  Status add_points(const nlohmann::json& section, const nlohmann::json& points);
  Status finish(const nlohmann::json& section);

 private:
  Status add_scenario(const nlohmann::json& section, const nlohmann::json& point);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A point of a sweep section as a report scenario: pass when the program detected or masked
/// the fault, fail when it hung, crashed, went on unknowing or corrupted data (xfail when the
/// section's `allow` names that verdict), skip when the fault was not reached or the point did
/// not run.
nlohmann::json point_scenario(const nlohmann::json& point, const nlohmann::json& section,
                              size_t run_id);

/// The sweep as one role of a SUT scenario (a `sweep` block; sut.json of its report directory):
/// verdict pass when sweep_exit_code is 0, not-reached when points were left unrun, else the
/// worst verdict of a point that failed; the score and the failed points as evidence.
nlohmann::json sweep_outcome(const nlohmann::json& section);

/// The exit code of a sweep: 1 when a point that ran failed (not allowed) as point_scenario
/// says; else 4 (kExitIncomplete) when points were left unrun and the section is not
/// `partial_ok`; else 0.
int sweep_exit_code(const nlohmann::json& section);

/// "13 of 48 points judged" when points were left unrun, "" when every point was.
std::string coverage_of(const nlohmann::json& section);

}  // namespace faultline::harness::sweep
