#include "faultline/harness/devices/device_profiles.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/schema_checker.hpp"
#include "base/schema_texts.hpp"
#include "faultline/harness/base/install_paths.hpp"
#include "faultline/harness/base/strict_json.hpp"
#include "faultline/transports/fault/fault_spec.hpp"

namespace faultline::harness {

namespace {

using nlohmann::json;

// A profile is a page of limits and their sources.
constexpr size_t kLargestProfile = size_t{1} << 20;

const SchemaChecker& profile_schema() {
  static const SchemaChecker checker(device_profile_schema_text());
  return checker;
}

Error bad(const std::string& file, const std::string& what) {
  return Error{ErrorCode::kInvalidArgument, file + ": " + what};
}

int errno_value(const std::string& name) {
  if (name == "ENOMEM") return ENOMEM;
  if (name == "EOPNOTSUPP") return EOPNOTSUPP;
  return EINVAL;
}

std::vector<std::string> profile_names(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::string DeviceProfile::source_of(const std::string& limit) const {
  json source = document.value("sources", json::object()).value(limit, json());
  // A block's own source (qp_types, identity).
  if (!source.is_object() && document.value(limit, json()).is_object())
    source = document.at(limit).value("source", json());
  if (!source.is_object()) return "";
  return source.value("kind", std::string()) + ": " + source.value("ref", std::string());
}

std::string DeviceProfile::errno_of(const std::string& block) const {
  const auto found = refused_errno.find(block);
  return found != refused_errno.end() ? found->second : refusal_errno;
}

json DeviceProfile::limits_fault() const {
  json fault = {{"kind", "limits"},
                {"errno", errno_value(refusal_errno)},
                {"inline", clamps_inline ? "clamp" : "refuse_create"}};
  // Every limit the verbs interposer enforces; "no limit" (2^64 - 1) as the largest its type holds.
  for (const auto& limit : transports::fault::limit_infos()) {
    if ((limit.appliers & transports::fault::kInterposer) == 0) continue;
    // A count known only from below is shown as that bound: what the device grants at least.
    const std::string limit_name(limit.name);
    for (const auto* known : {&limits, &at_least}) {
      if (const auto found = known->find(limit_name); found != known->end()) {
        fault[limit_name] = std::min(found->second, limit.maximum);
        break;
      }
    }
  }
  // What it has none of: the QP types and opcodes its driver refuses, with that driver's errno.
  for (const auto& [block, key] :
       {std::pair{"qp_types", "refuse_qp_types"}, std::pair{"operations", "refuse_operations"}}) {
    const auto said = supports.find(block);
    if (said == supports.end()) continue;
    json names = json::array();
    for (const auto& [refused, supported] : said->second)
      if (!supported) names.push_back(refused);
    if (!names.empty()) fault[key] = {{"names", names}, {"errno", errno_value(errno_of(block))}};
  }
  // Who the device is: perftest and UCX pick their inline sizes and paths by vendor part.
  const json identity = document.value("identity", json::object());
  for (const char* id : {"vendor_id", "vendor_part_id"})
    if (identity.contains(id)) fault[id] = identity.at(id);
  return fault;
}

json DeviceProfile::one_limit_fault(const std::string& limit) const {
  const json all = limits_fault();
  if (!all.contains(limit)) return nullptr;
  return {{"kind", "limits"},
          {"errno", all.at("errno")},
          {"inline", all.at("inline")},
          {limit, all.at(limit)}};
}

std::string default_devices_dir() { return default_scenario_dir() + "/devices"; }

Result<DeviceProfile> load_device_profile(const std::string& path) {
  auto read = read_input_file(path, kLargestProfile);
  if (!read.ok()) return std::move(read).take_error();
  return parse_device_profile(path, read.value());
}

Result<DeviceProfile> parse_device_profile(const std::string& path, std::string_view text) {
  auto parsed = parse_json_text(path, text);
  if (!parsed.ok()) return std::move(parsed).take_error();
  const json document = std::move(parsed).value();
  if (const auto problems = profile_schema().problem_lines(document); !problems.empty())
    return bad(path, problems.front());
  DeviceProfile profile;
  profile.file = path;
  profile.name = std::filesystem::path(path).stem().string();
  profile.document = document;
  for (const auto& [limit, value] : document.at("limits").items()) {
    const bool bound = value.is_object() && value.size() == 1 && value.contains("at_least") &&
                       value.at("at_least").is_number_unsigned();
    if (!value.is_number_unsigned() && !bound) {
      return bad(path, "/limits/" + limit +
                           ": expected a whole count >= 0, or {\"at_least\": N} for a count known "
                           "only from below");
    }
    if (!document.at("sources").contains(limit))
      return bad(path, "/sources/" + limit + ": expected the source of limits/" + limit);
    if (bound)
      profile.at_least[limit] = value.at("at_least").get<uint64_t>();
    else
      profile.limits[limit] = value.get<uint64_t>();
  }
  for (const char* block : {"qp_types", "operations"}) {
    if (!document.contains(block)) continue;
    auto& supported = profile.supports[block];
    for (const auto& [name, value] : document.at(block).items())
      if (value.is_boolean()) supported[name] = value.get<bool>();
    if (document.at(block).contains("errno"))
      profile.refused_errno[block] = document.at(block).at("errno");
  }
  if (document.contains("refusal")) {
    profile.refusal_errno = document.at("refusal").at("errno");
    profile.clamps_inline = document.at("refusal").at("inline") == "clamp";
  }
  return profile;
}

Result<std::vector<DeviceProfile>> select_device_profiles(const std::string& names,
                                                          const std::string& dir) {
  const std::vector<std::string> present = profile_names(dir);
  std::vector<std::string> chosen;
  bool all = false;
  std::istringstream list(names);
  for (std::string name; std::getline(list, name, ',');) {
    if (name.empty()) continue;
    all = all || name == "all";
    size_t before = chosen.size();
    // A profile's own name is that profile (irdma-e810, not irdma-e810-iwarp too); anything
    // else is a prefix of a family, or all.
    const bool exact = std::find(present.begin(), present.end(), name) != present.end();
    for (const auto& candidate : present) {
      if (name == "all" || candidate == name || (!exact && candidate.rfind(name + "-", 0) == 0))
        chosen.push_back(candidate);
    }
    if (chosen.size() == before) {
      std::string known;
      for (const auto& candidate : present) known += (known.empty() ? "" : ", ") + candidate;
      return Error{ErrorCode::kInvalidArgument,
                   "--profile " + name + ": no such profile in " + dir + " (present: " + known +
                       "; a prefix such as mlx5 selects every mlx5-* profile, all selects all)"};
    }
  }
  std::vector<DeviceProfile> profiles;
  for (const auto& name : chosen) {
    if (std::any_of(profiles.begin(), profiles.end(),
                    [&](const DeviceProfile& profile) { return profile.name == name; }))
      continue;
    auto profile = load_device_profile(dir + "/" + name + ".json");
    if (!profile.ok()) return std::move(profile).take_error();
    if (all && profile->document.at("transport") != "verbs")
      continue;  // "all" means the NICs: a libfabric provider is no port target
    profiles.push_back(std::move(profile).value());
  }
  return profiles;
}

}  // namespace faultline::harness
