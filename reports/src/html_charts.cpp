// The parts of the HTML report a person would rather look at than read: the pair grid and
// inline SVG bar charts (no script, nothing fetched).
#include "html_charts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "faultline/core/latency_buckets.hpp"
#include "faultline/reports/report_view.hpp"
#include "markup_escape.hpp"

namespace faultline::reports::html {

namespace {

using nlohmann::json;

struct Bar {
  std::string label;
  double value = 0;
  std::string text;  // printed at the end of the bar
};

// A horizontal bar chart, one bar per row, scaled to the largest.
void write_bars(std::ostringstream& html, const std::string& title, const std::vector<Bar>& bars) {
  constexpr int kLabelWidth = 300, kBarWidth = 360, kRow = 18;
  double largest = 0;
  for (const auto& bar : bars) largest = std::max(largest, bar.value);
  if (largest <= 0) return;
  const int height = static_cast<int>(bars.size()) * kRow + 24;
  html << "<figure><figcaption>" << escape_markup(title) << "</figcaption>"
       << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kLabelWidth + kBarWidth + 120
       << "\" height=\"" << height << "\" role=\"img\" aria-label=\"" << escape_markup(title)
       << "\">";
  int y = 4;
  for (const auto& bar : bars) {
    const auto width = std::lround(bar.value / largest * kBarWidth);
    html << "<text x=\"" << kLabelWidth - 6 << "\" y=\"" << y + 13
         << "\" text-anchor=\"end\" font-size=\"12\">" << escape_markup(bar.label) << "</text>"
         << "<rect x=\"" << kLabelWidth << "\" y=\"" << y + 2 << "\" width=\"" << width
         << "\" height=\"" << kRow - 4 << "\" fill=\"#4c72b0\"><title>"
         << escape_markup(bar.label + ": " + bar.text) << "</title></rect>"
         << "<text x=\"" << kLabelWidth + width + 6 << "\" y=\"" << y + 13 << "\" font-size=\"12\">"
         << escape_markup(bar.text) << "</text>";
    y += kRow;
  }
  html << "</svg></figure>\n";
}

// "2 us", "1.5 ms": a bucket's upper bound.
std::string duration_text(double seconds) {
  char text[32];
  if (seconds < 1e-3) {
    std::snprintf(text, sizeof text, "%g us", seconds * 1e6);
  } else if (seconds < 1) {
    std::snprintf(text, sizeof text, "%g ms", seconds * 1e3);
  } else {
    std::snprintf(text, sizeof text, "%g s", seconds);
  }
  return text;
}

std::string bytes_text(double bytes) {
  char text[32];
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

// Each side's traffic, with the run it belongs to.
template <typename Visit>
void for_each_traffic(const json& report, Visit visit) {
  for (const auto& scenario : report.value("scenarios", json::array())) {
    const json sides = scenario.value("sides", json::object());  // alive through the loop
    for (const auto& [agent, side] : sides.items()) {
      const json traffic = side.value("details", json::object()).value("traffic", json());
      if (traffic.is_object()) visit(scenario, agent, traffic);
    }
  }
}

void write_latency(std::ostringstream& html, const json& report) {
  const auto& bounds = latency_bounds_seconds();
  std::map<std::string, std::vector<double>> by_opcode;
  for_each_traffic(report, [&](const json&, const std::string&, const json& traffic) {
    const json latency = traffic.value("latency", json::object());
    for (const auto& [opcode, histogram] : latency.items()) {
      const json buckets = histogram.value("buckets", json::array());
      if (buckets.size() != bounds.size() + 1) continue;  // another faultline's buckets
      auto& sums = by_opcode[opcode];
      sums.resize(buckets.size());
      for (size_t i = 0; i < buckets.size(); ++i)
        if (buckets[i].is_number()) sums[i] += buckets[i].get<double>();
    }
  });
  for (const auto& [opcode, sums] : by_opcode) {
    std::vector<Bar> bars;
    bars.reserve(sums.size());
    for (size_t i = 0; i < sums.size(); ++i) {
      const std::string label = i < bounds.size() ? "<= " + duration_text(bounds[i])
                                                  : "> " + duration_text(bounds.back());
      char count[32];
      std::snprintf(count, sizeof count, "%.0f", sums[i]);
      bars.push_back({label, sums[i], count});
    }
    // Only the span that holds completions, so a chart is as tall as it needs to be.
    while (!bars.empty() && bars.back().value == 0) bars.pop_back();
    auto first = std::find_if(bars.begin(), bars.end(), [](const Bar& b) { return b.value > 0; });
    bars.erase(bars.begin(), first);
    write_bars(html, opcode + " completion latency (completions per bucket)", bars);
  }
}

void write_pair_bytes(std::ostringstream& html, const json& report) {
  const auto labels = agent_labels(report);
  std::map<std::string, double> by_pair;
  for_each_traffic(report, [&](const json& scenario, const std::string&, const json& traffic) {
    const json ranks = scenario.value("agents", json::object()).value("ranks", json::array());
    if (ranks.size() != 2 || !ranks[0].is_string() || !ranks[1].is_string()) return;
    const std::string pair = agent_label(labels, ranks[0]) + " - " + agent_label(labels, ranks[1]);
    const json sent = traffic.value("bytes", json::object()).value("sent", json(0));
    if (sent.is_number()) by_pair[pair] += sent.get<double>();
  });
  std::vector<Bar> bars;
  bars.reserve(by_pair.size());
  for (const auto& [pair, bytes] : by_pair) bars.push_back({pair, bytes, bytes_text(bytes)});
  write_bars(html, "Bytes sent, by pair of agents (both directions)", bars);
}

}  // namespace

void write_pair_grid(std::ostringstream& html, const json& report) {
  const PairMatrix matrix = pair_matrix(report);
  if (matrix.agents.empty()) return;
  html << "<h2 id=\"pairs\">Pairs</h2>\n<p>The worst verdict of each pair's runs; hover for the "
          "counts.</p>\n<table class=\"grid\"><tr><th></th>";
  for (const auto& agent : matrix.agents) html << "<th>" << escape_markup(agent) << "</th>";
  html << "</tr>\n";
  for (const auto& row : matrix.agents) {
    html << "<tr><th>" << escape_markup(row) << "</th>";
    for (const auto& column : matrix.agents) {
      auto found = matrix.cells.find({row, column});
      if (row == column || found == matrix.cells.end()) {
        html << "<td class=\"none\"></td>";
        continue;
      }
      const PairCell& cell = found->second;
      std::string counts = std::to_string(cell.runs) + " run(s):";
      for (const auto& [verdict, count] : cell.verdicts)
        counts += " " + std::to_string(count) + " " + verdict;
      html << "<td class=\"cell " << escape_markup(cell.worst) << "\" title=\""
           << escape_markup(row + " - " + column + ": " + counts) << "\">"
           << escape_markup(cell.worst) << "</td>";
    }
    html << "</tr>\n";
  }
  html << "</table>\n";
}

void write_charts(std::ostringstream& html, const json& report) {
  std::ostringstream charts;
  write_latency(charts, report);
  write_pair_bytes(charts, report);
  if (charts.str().empty()) return;
  html << "<h2 id=\"charts\">Traffic</h2>\n" << charts.str();
}

}  // namespace faultline::reports::html
