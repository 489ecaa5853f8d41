// Where a monitor's rounds go: report_dir/rounds/round-NNNNNNNN-YYYYMMDDTHHMMSSZ.json (the
// last N kept) and report_dir/latest.json, each written atomically.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "faultline/core/status.hpp"

namespace faultline::harness::monitor {

class RoundStore {
 public:
  RoundStore(std::string directory, size_t keep) : directory_(std::move(directory)), keep_(keep) {}

  /// The number of the newest round a monitor left here, 0 when there is none.
  uint64_t last_round() const;
  /// Writes the round's report and latest.json, then removes the oldest beyond `keep`.
  Status write(uint64_t round, const nlohmann::json& report) const;

 private:
  std::string directory_;
  size_t keep_;
};

/// A report's time as a file name's part: "2026-11-25T03:10:00Z" -> "20261125T031000Z".
std::string file_stamp(const std::string& utc);

}  // namespace faultline::harness::monitor
