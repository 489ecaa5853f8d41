#include "faultline/transports/port_counters.hpp"

#include <filesystem>
#include <fstream>

namespace faultline::transports {

namespace {

// Adds every readable counter file of `directory` to `values` under "<prefix>/<file>".
void read_counter_directory(const std::filesystem::path& directory, const std::string& prefix,
                            std::map<std::string, uint64_t>& values) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (!entry.is_regular_file(error)) continue;
    std::ifstream file(entry.path());
    uint64_t value = 0;
    if (file >> value) values[prefix + "/" + entry.path().filename().string()] = value;
  }
}

}  // namespace

std::optional<PortCounters> read_port_counters(const std::string& device, uint32_t port,
                                               const std::string& root) {
  const std::filesystem::path directory =
      std::filesystem::path(root) / device / "ports" / std::to_string(port);
  std::error_code error;
  if (device.empty() || !std::filesystem::is_directory(directory, error)) return std::nullopt;
  PortCounters counters{device, port, {}};
  for (const char* kind : {"hw_counters", "counters"})
    read_counter_directory(directory / kind, kind, counters.values);
  return counters;
}

std::map<std::string, uint64_t> grown_counters(const PortCounters& before,
                                               const PortCounters& after) {
  std::map<std::string, uint64_t> grown;
  for (const auto& [name, value] : after.values) {
    auto earlier = before.values.find(name);
    if (earlier != before.values.end() && value > earlier->second)
      grown[name] = value - earlier->second;
  }
  return grown;
}

}  // namespace faultline::transports
