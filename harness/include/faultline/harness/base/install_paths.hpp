#pragma once

#include <string>

namespace faultline::harness {

/// `relative` under the installation this binary belongs to (PREFIX/bin/faultline ->
/// PREFIX/relative), or "" when the binary is not in an installation that has it (a build
/// tree: its callers then use the source tree's copy).
std::string installed_path(const std::string& relative);

/// The scenario directory and the interposers' directory of an installation, or "".
std::string installed_scenario_dir();
std::string installed_interpose_dir();

/// The scenario directory: $FAULTLINE_SCENARIO_DIR, else the installation's
/// (PREFIX/share/faultline/scenarios), else the source tree's `scenarios/`.
std::string default_scenario_dir();

}  // namespace faultline::harness
