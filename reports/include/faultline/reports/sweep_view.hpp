#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace faultline::reports {

/// A sweep (the report's `sweep` section) as a matrix for people: a row per call site of the
/// program (the worst first), a column per fault family; each cell the verdicts of its points
/// in occurrence order, with the time from the fault to the program's error where it said one.
struct SweepView {
  struct Cell {
    std::string text;   ///< "detected 12 ms · hang"; empty: no point there
    std::string worst;  ///< the worst of its verdicts
  };
  struct Row {
    std::string name;
    std::vector<Cell> cells;  ///< one per family
  };
  std::string score;    ///< "N fault points: detected A, masked B, ..."
  std::string stopped;  ///< why points were left out, or empty
  size_t planned = 0;   ///< the points of the sweep (this shard's)
  size_t judged = 0;    ///< those that ran to a verdict (the others: not-run)
  std::string worst;    ///< the worst verdict among those judged; empty when none was
  std::vector<std::string> families;
  std::vector<Row> rows;
  std::vector<std::vector<std::string>> changes;  ///< since a baseline: name, before, after
  std::vector<std::vector<std::string>> hangs;    ///< name, folded stacks
};
/// Empty `score` for a report without a sweep.
SweepView sweep_view(const nlohmann::json& report);

/// How bad a sweep verdict is, 0 the worst (silent-corruption, undetected, crashed, hang, ...).
int sweep_severity(const std::string& verdict);
/// The report's class of a sweep verdict, for colours: fail, error, skip, xfail (masked), pass.
std::string sweep_verdict_class(const std::string& verdict);

}  // namespace faultline::reports
