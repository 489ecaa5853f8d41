#include "round_store.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "faultline/reports/atomic_file.hpp"

namespace faultline::harness::monitor {

namespace {

namespace fs = std::filesystem;

// The round number of a file name "round-00000012-...json", or 0 for any other name.
uint64_t round_of(const std::string& name) {
  unsigned long long round = 0;
  char rest[64] = {};
  if (name.size() > 60 || std::sscanf(name.c_str(), "round-%8llu-%40s", &round, rest) != 2)
    return 0;
  return round;
}

std::vector<std::pair<uint64_t, fs::path>> round_files(const std::string& directory) {
  std::vector<std::pair<uint64_t, fs::path>> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(fs::path(directory) / "rounds", error)) {
    const std::string name = entry.path().filename().string();
    if (const uint64_t round = round_of(name); round > 0 && name.ends_with(".json"))
      files.emplace_back(round, entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string file_stamp(const std::string& utc) {
  std::string stamp;
  for (char c : utc)
    if (c != '-' && c != ':') stamp += c;
  return stamp;
}

uint64_t RoundStore::last_round() const {
  const auto files = round_files(directory_);
  return files.empty() ? 0 : files.back().first;
}

Status RoundStore::write(uint64_t round, const nlohmann::json& report) const {
  char name[80];
  std::snprintf(name, sizeof name, "round-%08llu-%s.json", static_cast<unsigned long long>(round),
                file_stamp(report.at("monitor").at("started_at").get<std::string>()).c_str());
  const std::string text = report.dump(2) + "\n";
  FAULTLINE_RETURN_IF_ERROR(
      reports::write_file_atomically((fs::path(directory_) / "rounds" / name).string(), text));
  FAULTLINE_RETURN_IF_ERROR(
      reports::write_file_atomically((fs::path(directory_) / "latest.json").string(), text));
  auto files = round_files(directory_);
  for (size_t i = 0; i + keep_ < files.size(); ++i) {
    std::error_code error;
    fs::remove(files[i].second, error);
    if (error) {
      return Error{ErrorCode::kIoError,
                   "removing the old round " + files[i].second.string() + ": " + error.message()};
    }
  }
  return {};
}

}  // namespace faultline::harness::monitor
