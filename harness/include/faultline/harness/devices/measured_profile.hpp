#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/transports/transport.hpp"

namespace faultline::harness {

/// One device's profile as measured here (scenarios/devices/ format, version 2): every limit it
/// reports and the QP types `qp_types` (measured; empty: none probed), each with where and
/// when as its source. What the device does not report is left out: unknown, never guessed.
nlohmann::json measured_profile(const transports::DeviceInfo& device, const std::string& name,
                                const std::map<std::string, bool>& qp_types);

/// One value of a library profile held against the same value measured here.
struct ProfileValue {
  std::string name;     ///< "max_qp_wr", "qp_types.UD"
  std::string library;  ///< the library's value, "-" when it has none
  std::string here;     ///< measured here, "-" when not measured
  /// same, differs, library lacks it (measured here only), not measured here (library only)
  std::string verdict;
};

/// Every limit, QP type and operation of either profile, in name order.
std::vector<ProfileValue> compare_profiles(const nlohmann::json& library,
                                           const nlohmann::json& measured);

/// Whether a comparison asks for the library to change: a value that differs, or one the
/// library lacks. A value not measured here is no difference.
bool has_differences(const std::vector<ProfileValue>& values);

}  // namespace faultline::harness
