#pragma once

#include <nlohmann/json.hpp>
#include <sstream>

namespace faultline::reports::html {

/// The pair matrix as a grid of agents by agents, each cell the colour of its worst verdict,
/// its title (shown on hover) the runs by verdict. Nothing below 3 agents.
void write_pair_grid(std::ostringstream& html, const nlohmann::json& report);

/// Inline SVG charts: the completion latency distribution of each opcode over the whole run
/// (the traffic meter's buckets of every side added up) and the bytes each pair moved.
/// Nothing when the sides recorded no traffic.
void write_charts(std::ostringstream& html, const nlohmann::json& report);

}  // namespace faultline::reports::html
