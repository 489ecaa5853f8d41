#include "faultline/reports/sweep_view.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace faultline::reports {

namespace {

using nlohmann::json;

std::string sweep_text(const json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

const std::vector<std::string>& worst_first() {
  static const std::vector<std::string> order = {
      "silent-corruption", "undetected", "crashed", "hang",     "fail", "error",
      "not-reached",       "not-run",    "masked",  "detected", "pass"};
  return order;
}

// "detected 12 ms", "hang": the time from the fault to the program's error, where it said one.
std::string point_text(const json& point) {
  std::string verdict = sweep_text(point, "verdict");
  const auto ms = point.find("fault_to_error_ms");
  if (verdict == "detected" && ms != point.end() && ms->is_number())
    verdict +=
        " " + std::to_string(static_cast<long long>(std::llround(ms->get<double>()))) + " ms";
  return verdict;
}

}  // namespace

int sweep_severity(const std::string& verdict) {
  const auto& order = worst_first();
  const auto found = std::find(order.begin(), order.end(), verdict);
  return static_cast<int>(found - order.begin());
}

std::string sweep_verdict_class(const std::string& verdict) {
  if (sweep_severity(verdict) <= sweep_severity("fail")) return "fail";
  if (verdict == "error") return "error";
  if (verdict == "masked") return "xfail";
  if (verdict == "detected" || verdict == "pass") return "pass";
  return "skip";
}

SweepView sweep_view(const json& report) {
  SweepView view;
  const json sweep = report.value("sweep", json());
  if (!sweep.is_object()) return view;
  view.score = sweep_text(sweep, "score_line");
  view.stopped = sweep_text(sweep, "stopped");
  const json points = sweep.value("points", json::array());
  // Columns: the families the points have, in the section's order.
  for (const auto& family : sweep.value("families", json::array()))
    if (family.is_string() && std::any_of(points.begin(), points.end(), [&](const json& p) {
          return p.is_object() && p.value("family", "") == family;
        }))
      view.families.push_back(family.get<std::string>());
  std::map<std::string, size_t> row_of;
  std::vector<int> worst;
  for (const auto& point : points) {
    if (!point.is_object()) continue;
    const std::string verdict = sweep_text(point, "verdict");
    ++view.planned;
    if (verdict != "not-run") {
      ++view.judged;
      if (view.worst.empty() || sweep_severity(verdict) < sweep_severity(view.worst))
        view.worst = verdict;
    }
    const auto column =
        std::find(view.families.begin(), view.families.end(), sweep_text(point, "family"));
    if (column == view.families.end()) continue;
    const std::string name = sweep_text(point, "row");
    if (row_of.emplace(name, view.rows.size()).second) {
      view.rows.push_back({name, std::vector<SweepView::Cell>(view.families.size())});
      worst.push_back(static_cast<int>(worst_first().size()));
    }
    const size_t row = row_of.at(name);
    SweepView::Cell& cell = view.rows[row].cells[column - view.families.begin()];
    cell.text += (cell.text.empty() ? "" : " · ") + point_text(point);
    if (cell.worst.empty() || sweep_severity(verdict) < sweep_severity(cell.worst))
      cell.worst = verdict;
    worst[row] = std::min(worst[row], sweep_severity(verdict));
    if (const std::string stacks = sweep_text(point, "hung_stacks"); !stacks.empty())
      view.hangs.push_back({sweep_text(point, "name"), stacks});
  }
  std::vector<size_t> order(view.rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return worst[a] < worst[b]; });
  std::vector<SweepView::Row> sorted;
  sorted.reserve(order.size());
  for (const size_t i : order) sorted.push_back(std::move(view.rows[i]));
  view.rows = std::move(sorted);
  for (const auto& change : sweep.value("changes", json::array()))
    if (change.is_object())
      view.changes.push_back(
          {sweep_text(change, "name"), sweep_text(change, "before"), sweep_text(change, "after")});
  return view;
}

}  // namespace faultline::reports
