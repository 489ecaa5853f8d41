// A sweep as report.json holds it (`sweep`): the program, its clean run, its call sites, each
// point with its verdict; the score; what changed since a baseline; shards merged.
#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "faultline/core/printable_text.hpp"
#include "faultline/harness/base/strict_json.hpp"
#include "faultline/harness/sweep/sweep.hpp"

namespace faultline::harness::sweep {

namespace {

using nlohmann::json;

// The verdicts in the score's order; "not-run" for a point the budget left out.
const std::vector<std::string>& score_order() {
  static const std::vector<std::string> order = {
      "detected", "masked", "hang",  "undetected", "silent-corruption", "crashed", "not-reached",
      "fail",     "pass",   "error", "not-run"};
  return order;
}

// The function of a gdb frame line ("#3  0x00007f.. in NAME (args) at file", "#0  NAME (...)"),
// at most 200 characters of it; "" for another line. Read by hand: std::regex recurses once per
// character, and a 200,000-letter name overflowed the stack.
std::string frame_function(const std::string& line) {
  constexpr size_t kLongest = 200;
  if (line.size() < 2 || line[0] != '#' || std::isdigit(static_cast<unsigned char>(line[1])) == 0)
    return "";
  size_t at = line.find_first_not_of("0123456789", 1);
  const size_t blanks = at == std::string::npos ? 0 : line.find_first_not_of(" \t", at) - at;
  if (blanks == 0 || at + blanks >= line.size()) return "";
  at += blanks;
  if (line.compare(at, 2, "0x") == 0) {
    const size_t hex_end = line.find_first_not_of("0123456789abcdef", at + 2);
    if (hex_end != std::string::npos && line.compare(hex_end, 4, " in ") == 0) at = hex_end + 4;
  }
  const size_t end = std::min(line.find_first_of(" (", at), line.size());
  if (end == at) return "";
  return end - at > kLongest ? line.substr(at, kLongest) + "..." : line.substr(at, end - at);
}

// A hang's `gdb -batch` stacks folded: one line per distinct thread stack, outermost frame
// first, its innermost 8 functions, with how many threads have it.
std::string folded(const std::string& stacks) {
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  std::vector<std::string> frames;
  auto finish_thread = [&] {
    if (frames.empty()) return;
    std::string line;
    const size_t kept = std::min<size_t>(frames.size(), 8);
    for (size_t i = kept; i > 0; --i) line += (line.empty() ? "" : ";") + frames[i - 1];
    if (counts[line]++ == 0) order.push_back(line);
    frames.clear();
  };
  std::istringstream lines(stacks);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Thread ", 0) == 0) finish_thread();
    if (std::string function = frame_function(line); !function.empty())
      frames.push_back(std::move(function));
  }
  finish_thread();
  std::string text;
  for (const auto& stack : order) text += std::to_string(counts[stack]) + "x " + stack + "\n";
  return text;
}

json site_json(const sut::CallSite& site) {
  json entry = {{"site", site.site},     {"call", site.call},     {"side", site.side},
                {"opcode", site.opcode}, {"layer", site.layer},   {"outermost", site.outermost},
                {"count", site.count},   {"label", site.label()}, {"what", site.what()},
                {"stack", site.stack}};
  entry["rank"] = site.rank ? json(*site.rank) : json(nullptr);
  return entry;
}

json point_json(const PointRun& run) {
  const sut::FaultPoint& point = run.point;
  json entry = {{"number", run.number},
                {"id", point.id},
                {"name", point.name()},
                {"family", point.family},
                {"occurrence", point.occurrence},
                {"nth", point.nth},
                {"fault", point.fault}};
  entry["site"] = point.site ? json(point.site->site) : json(nullptr);
  entry["target"] = point.target;
  entry["row"] = point.row();
  if (!run.summary) {
    entry.update({{"verdict", "not-run"},
                  {"seconds", 0},
                  {"evidence", run.not_run.empty() ? "the budget ran out" : run.not_run}});
    return entry;
  }
  const json& summary = *run.summary;
  entry["verdict"] = summary.value("verdict", "error");
  entry["seconds"] = summary.value("seconds", 0.0);
  entry["fault_to_error_ms"] = summary.value("fault_to_error_ms", json(nullptr));
  entry["first_error_line"] = summary.value("first_error_line", "");
  entry["evidence"] = summary.value("evidence", "");
  entry["log"] = summary.value("log", "");
  if (summary.contains("stacks") && summary.at("stacks").is_string())
    entry["hung_stacks"] = folded(summary.at("stacks").get<std::string>());
  return entry;
}

json score_of(const json& points) {
  json score = {{"points", points.size()}};
  for (const auto& verdict : score_order()) score[verdict] = 0;
  for (const auto& point : points) {
    const std::string verdict = text_at(point, "verdict");
    if (score.contains(verdict)) score[verdict] = score[verdict].get<int>() + 1;
  }
  return score;
}

}  // namespace

json sweep_section(const SweepResult& result, const SweepOptions& options) {
  json sites = json::array();
  for (const auto& site : result.sites) sites.push_back(site_json(site));
  json points = json::array();
  for (const auto& run : result.runs) points.push_back(point_json(run));
  json program = json::array();
  for (const auto& argument : options.command)  // bytes that are not UTF-8 kept as \xNN
    program.push_back(escape_invalid_utf8(argument));
  json section = {
      {"program", program},
      {"clean", result.clean},
      {"shard", std::to_string(options.shard_index) + "/" + std::to_string(options.shard_count)},
      {"points_total", result.points_total},
      {"stopped", result.stopped},
      {"seconds", result.seconds},
      {"families", sut::sweep_families()},
      {"allow", options.allow},
      {"partial_ok", options.partial_ok},
      {"sites", sites},
      {"points", points}};
  section["score"] = score_of(section["points"]);
  section["score_line"] = score_line(section);
  return section;
}

std::string score_line(const json& section) {
  const json score = score_of(section.value("points", json::array()));
  // A sweep cut short says so first: how many of its points were judged.
  const std::string coverage = coverage_of(section);
  std::string line =
      coverage.empty()
          ? std::to_string(score.at("points").get<int>()) + " fault points:"
          : coverage + " (" + std::to_string(score.at("not-run").get<int>()) + " not run):";
  bool first = true;
  for (const auto& verdict : score_order()) {
    if (verdict == "not-run" && !coverage.empty()) continue;  // said above
    const int count = score.at(verdict).get<int>();
    const bool always =
        verdict != "fail" && verdict != "pass" && verdict != "error" && verdict != "not-run";
    if (count == 0 && !always) continue;
    line += (first ? " " : ", ") + verdict + " " + std::to_string(count);
    first = false;
  }
  return line;
}

json changes_since(const json& baseline, const json& section) {
  std::map<std::string, json> before;
  for (const auto& point : baseline.value("points", json::array()))
    if (point.is_object()) before[text_at(point, "id")] = point;
  json changes = json::array();
  for (const auto& point : section.value("points", json::array())) {
    const std::string id = text_at(point, "id");
    auto found = before.find(id);
    const std::string was = found == before.end() ? "absent" : text_at(found->second, "verdict");
    if (was != text_at(point, "verdict"))
      changes.push_back({{"id", id},
                         {"name", text_at(point, "name")},
                         {"before", was},
                         {"after", text_at(point, "verdict")}});
    if (found != before.end()) before.erase(found);
  }
  for (const auto& [id, point] : before)
    changes.push_back({{"id", id},
                       {"name", text_at(point, "name")},
                       {"before", text_at(point, "verdict")},
                       {"after", "absent"}});
  return changes;
}

namespace {

// The call sites of a sweep's clean run, by id: shards of one sweep mapped the same ones.
std::vector<std::string> site_ids(const json& section) {
  std::vector<std::string> ids;
  for (const auto& site : section.value("sites", json::array()))
    ids.push_back(text_at(site, "site"));
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Why `section` is not a shard of the same sweep as `first`, or "".
std::string other_sweep(const json& section, const json& first) {
  if (section.value("program", json()) != first.value("program", json())) return "another program";
  if (section.value("points_total", json()) != first.value("points_total", json()))
    return "another number of points (" + section.value("points_total", json()).dump() +
           " against " + first.value("points_total", json()).dump() + ")";
  if (site_ids(section) != site_ids(first)) return "another clean run (other call sites)";
  return "";
}

}  // namespace

Result<json> merge_sections(const std::vector<json>& sections,
                            const std::vector<std::string>& origins) {
  if (sections.empty()) return Error{ErrorCode::kInvalidArgument, "no report to collect"};
  json merged = sections.front();
  std::map<uint64_t, json> points;
  std::string stopped;
  for (size_t i = 0; i < sections.size(); ++i) {
    const json& section = sections[i];
    if (!section.is_object() || !section.contains("points"))
      return Error{ErrorCode::kInvalidArgument, origins[i] + ": no sweep in its report.json"};
    if (const std::string why = other_sweep(section, merged); !why.empty())
      return Error{ErrorCode::kInvalidArgument,
                   origins[i] + ": a shard of another sweep than " + origins[0] + "'s: " + why};
    for (const auto& point : section.at("points")) {
      const uint64_t number = point.value("number", uint64_t{0});
      const auto [at, added] = points.emplace(number, point);
      if (!added && text_at(at->second, "id") != text_at(point, "id")) {
        return Error{ErrorCode::kInvalidArgument,
                     origins[i] + ": point " + std::to_string(number) + " is " +
                         text_at(point, "id") + " there and " + text_at(at->second, "id") +
                         " in another shard: shards of different sweeps"};
      }
      if (!added) at->second = point;
    }
    if (const std::string why = text_at(section, "stopped"); !why.empty())
      stopped += (stopped.empty() ? "" : "; ") + origins[i] + ": " + why;
  }
  json all = json::array();
  for (auto& [number, point] : points) all.push_back(std::move(point));
  merged["points"] = all;
  merged["stopped"] = stopped;
  merged["shard"] = "merged from " + std::to_string(sections.size()) + " shard(s)";
  merged["score"] = score_of(merged["points"]);
  merged["score_line"] = score_line(merged);
  return merged;
}

}  // namespace faultline::harness::sweep
