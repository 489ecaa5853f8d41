#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/core/status.hpp"

namespace faultline::harness {

/// One device profile of the library (scenarios/devices/NAME.json,
/// scenarios/schema/device-profile.schema.json): what a device grants, each value with its
/// source; a limit that is not known is absent.
struct DeviceProfile {
  std::string name;  ///< the file name without .json
  std::string file;
  nlohmann::json document;
  std::map<std::string, uint64_t> limits;
  /// Limits known only from below (`{"at_least": N}`: a count the firmware reports, of which
  /// every public value is at least N): a request up to N fits, one above it cannot be judged.
  std::map<std::string, uint64_t> at_least;
  std::string refusal_errno = "EINVAL";  ///< what its driver returns for a create above a limit
  bool clamps_inline = false;  ///< an inline request above the cap is clamped (hns), not refused
  /// What it supports besides counts, by block: "qp_types" (RC, UC, UD, XRC, RAW_PACKET,
  /// DRIVER: created or refused) and "operations" (RDMA_WRITE_WITH_IMM, SEND_WITH_IMM: posted
  /// or refused). A name absent from a block is not known; a block absent, nothing of it is.
  std::map<std::string, std::map<std::string, bool>> supports;
  /// What a create or post of something a block refuses fails with, by block ("EOPNOTSUPP");
  /// absent: refusal_errno.
  std::map<std::string, std::string> refused_errno;

  /// The errno name a refusal of `block`'s kind fails with.
  std::string errno_of(const std::string& block) const;

  /// "kind: reference" of a limit's value (or of a block's: "qp_types", "operations"); "" when
  /// the profile does not know it.
  std::string source_of(const std::string& limit) const;
  /// The plan fault (`limits`) that makes a program see this device: its known caps, its
  /// driver's errno and inline behaviour, the QP types and opcodes it refuses.
  nlohmann::json limits_fault() const;
  /// The same with only `limit`'s cap (a sweep's point for one limit); null when the profile
  /// has no cap of that name.
  nlohmann::json one_limit_fault(const std::string& limit) const;
};

/// The profile library: $FAULTLINE_SCENARIO_DIR/devices, else the source tree's.
std::string default_devices_dir();

/// Loads one profile, checked against the schema; a limit without a source is an error too.
/// Errors name the file, the pointer and what was expected.
Result<DeviceProfile> load_device_profile(const std::string& path);
/// The same for a file's text already read (fuzzing); `path` stands for the file.
Result<DeviceProfile> parse_device_profile(const std::string& path, std::string_view text);

/// The profiles `names` selects ("hns_roce,mlx5-cx7"): each NAME is a profile of that name, or
/// every profile whose name begins with NAME and '-' ("mlx5": its ConnectX parts); "all" is
/// every verbs profile. An unknown name is an error listing the profiles present.
Result<std::vector<DeviceProfile>> select_device_profiles(const std::string& names,
                                                          const std::string& dir);

}  // namespace faultline::harness
