// A device profile measured on this machine, and a library profile held against it.
#include "faultline/harness/devices/measured_profile.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <set>

#include "faultline/transports/json.hpp"

namespace faultline::harness {

namespace {

using nlohmann::json;

std::string text_of(const json& value) {
  if (value.is_null()) return "-";
  if (value.is_object() && value.contains("at_least"))
    return "at least " + value.at("at_least").dump();
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// A measured count against the library's lower bound ({"at_least": N}).
std::string against_bound(const json& bound, const json& here) {
  if (!here.is_number_unsigned()) return "not measured here";
  return here.get<uint64_t>() >= bound.at("at_least").get<uint64_t>() ? "within its lower bound"
                                                                      : "below its lower bound";
}

// "name" -> value of the limits, "qp_types.T" and "operations.O" -> supported,
// "identity.vendor_id" and "identity.vendor_part_id", and "wire.protocols", of one profile.
std::map<std::string, json> values_of(const json& profile) {
  std::map<std::string, json> values;
  const json limits = profile.value("limits", json::object());  // named: items() refers to it
  for (const auto& [name, value] : limits.items()) values[name] = value;
  for (const char* block : {"qp_types", "operations"}) {
    const json supported = profile.value(block, json::object());
    for (const auto& [name, value] : supported.items())
      if (value.is_boolean()) values[std::string(block) + "." + name] = value;
  }
  const json identity = profile.value("identity", json::object());
  for (const char* id : {"vendor_id", "vendor_part_id"})
    if (identity.contains(id)) values[std::string("identity.") + id] = identity.at(id);
  // The protocols as a set: the order a file lists them in says nothing.
  json protocols = profile.value("wire", json::object()).value("protocols", json());
  if (protocols.is_array()) {
    std::sort(protocols.begin(), protocols.end());
    values["wire.protocols"] = protocols;
  }
  return values;
}

}  // namespace

json measured_profile(const transports::DeviceInfo& device, const std::string& name,
                      const std::map<std::string, bool>& qp_types) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  utsname system{};
  uname(&system);
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const std::string kernel = std::string(system.sysname) + " " + system.release;
  const json source = {{"kind", "measured"},
                       {"ref", "faultline devices --save-profile on " + std::string(host) + " (" +
                                   kernel + ", firmware " + device.firmware + ", " + date + ")"}};
  json limits = json::object();
  json sources = json::object();
  const json measured = device.limits;
  for (const auto& [limit, value] : measured.items()) {
    if (value.is_null()) continue;
    limits[limit] = value;
    sources[limit] = source;
  }
  json profile = {{"profile_version", 2},
                  {"name", name},
                  {"description", device.transport + "/" + device.provider + " " + device.name +
                                      ", measured with faultline devices --save-profile"},
                  {"confidence", "measured"},
                  {"captured",
                   {{"host", host},
                    {"kernel", kernel},
                    {"date", date},
                    {"faultline_version", FAULTLINE_VERSION}}},
                  {"transport", device.transport},
                  {"provider", device.provider},
                  {"native_provider", device.native_provider},
                  {"device", device.name},
                  {"firmware", device.firmware},
                  {"limits", limits},
                  {"sources", sources},
                  {"capabilities", device.capabilities}};
  if (!qp_types.empty()) {
    json types = qp_types;
    types["source"] = source;
    profile["qp_types"] = types;
  }
  if (!device.wire_protocols.empty())
    profile["wire"] = {{"protocols", device.wire_protocols}, {"source", source}};
  if (device.vendor_id && device.vendor_part_id)
    profile["identity"] = {{"vendor_id", *device.vendor_id},
                           {"vendor_part_id", *device.vendor_part_id},
                           {"source", source}};
  return profile;
}

std::vector<ProfileValue> compare_profiles(const json& library, const json& measured) {
  const auto theirs = values_of(library);
  const auto ours = values_of(measured);
  std::set<std::string> names;
  for (const auto& [name, value] : theirs) names.insert(name);
  for (const auto& [name, value] : ours) names.insert(name);
  std::vector<ProfileValue> values;
  for (const auto& name : names) {
    const auto in_library = theirs.find(name);
    const auto in_here = ours.find(name);
    const json library_value = in_library != theirs.end() ? in_library->second : json();
    const json here_value = in_here != ours.end() ? in_here->second : json();
    const bool bound = library_value.is_object() && library_value.contains("at_least");
    std::string verdict = bound                         ? against_bound(library_value, here_value)
                          : library_value == here_value ? "same"
                          : here_value.is_null()        ? "not measured here"
                          : library_value.is_null()     ? "library lacks it"
                                                        : "differs";
    values.push_back({name, text_of(library_value), text_of(here_value), verdict});
  }
  return values;
}

bool has_differences(const std::vector<ProfileValue>& values) {
  for (const auto& value : values)
    if (value.verdict == "differs" || value.verdict == "library lacks it" ||
        value.verdict == "below its lower bound")
      return true;
  return false;
}

}  // namespace faultline::harness
