#include "faultline/harness/sut/sut_scenario.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "faultline/harness/base/duration.hpp"
#include "faultline/harness/base/scenario_spec.hpp"
#include "faultline/harness/base/strict_json.hpp"
#include "faultline/harness/devices/device_profiles.hpp"
#include "faultline/harness/sut/fault_points.hpp"
#include "faultline/transports/fault/fault_spec.hpp"

namespace faultline::harness::sut {

namespace {

// A SUT scenario with its faults: 10,000 faults of a plan fit many times over.
constexpr size_t kLargestSutScenario = size_t{16} << 20;

using nlohmann::json;

// An executable of that name in a $PATH folder (looked up here: no shell, no child process).
bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string folders = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= folders.size();) {
    size_t end = folders.find(':', start);
    if (end == std::string::npos) end = folders.size();
    const std::string folder = folders.substr(start, end - start);
    if (!folder.empty() && ::access((folder + "/" + program).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

Error bad(const std::string& file, const std::string& pointer, const std::string& expected) {
  return Error{ErrorCode::kInvalidArgument, file + ": " + pointer + ": expected " + expected};
}

Result<std::vector<std::string>> strings_at(const json& value, const std::string& file,
                                            const std::string& pointer) {
  if (!value.is_array() || value.empty()) return bad(file, pointer, "a non-empty array of strings");
  std::vector<std::string> strings;
  for (const auto& item : value) {
    if (!item.is_string()) return bad(file, pointer, "a non-empty array of strings");
    strings.push_back(item.get<std::string>());
  }
  return strings;
}

// The string at `key`, or `fallback` where it is absent; anything but a string is an error.
Result<std::string> optional_string(const json& object, const char* key, std::string fallback,
                                    const std::string& file, const std::string& pointer) {
  if (!object.contains(key)) return fallback;
  if (!object.at(key).is_string()) return bad(file, pointer, "a string");
  return object.at(key).get<std::string>();
}

// A name that becomes a folder of a report (DIR/<scenario>/<role>): letters, digits, '.', '-'
// and '_', not starting with '.', so never ".." or a path.
bool is_folder_name(const json& value) {
  if (!value.is_string()) return false;
  const std::string& name = value.get_ref<const std::string&>();
  return !name.empty() && name.size() <= 80 && name.front() != '.' &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
         });
}

Result<SutRole> load_role(const json& role, const std::string& file, size_t index) {
  const std::string at = "/roles/" + std::to_string(index);
  if (!role.is_object() || !is_folder_name(role.value("name", json())))
    return bad(file, at + "/name",
               "a role name of letters, digits, '.', '-' and '_' (\"server\", \"client\")");
  SutRole loaded;
  loaded.name = role.at("name").get<std::string>();
  auto command = strings_at(role.value("command", json()), file, at + "/command");
  if (!command.ok()) return std::move(command).take_error();
  loaded.command = std::move(command).value();
  loaded.faults = role.value("faults", json::array());
  loaded.with = role.value("with", json::array());
  // The faults are the interposers' plan language: checked here as they will read them.
  auto faults = transports::fault::parse_fault_set(
      {{"faults", loaded.faults}}, transports::fault::kInterposer, file + ": " + at);
  if (!faults.ok()) return std::move(faults).take_error();
  if (!loaded.with.is_array())
    return bad(file, at + "/with", "an array of standing faults (the role's conditions)");
  for (size_t i = 0; i < loaded.with.size(); ++i) {
    auto standing = transports::fault::parse_fault(loaded.with[i], transports::fault::kInterposer,
                                                   file + ": " + at + "/with/" + std::to_string(i));
    if (!standing.ok()) return std::move(standing).take_error();
  }
  const json after = role.value("after_ms", json(0));
  if (!after.is_number_integer() || after.get<int64_t>() < 0 || after.get<int64_t>() > 600000)
    return bad(file, at + "/after_ms", "milliseconds from 0 to 600000");
  loaded.after_ms = after.get<int>();
  const json listens = role.value("listens", json(false));
  if (!listens.is_boolean())
    return bad(file, at + "/listens", "true or false (whether it listens on {port})");
  loaded.listens = listens.get<bool>();
  return loaded;
}

Status load_checker(const json& document, const std::string& file, Checker& checker) {
  const json value = document.value("checker", json::object());
  if (!value.is_object()) return bad(file, "/checker", "an object {ok, wrong, error}");
  for (auto [key, target] : {std::pair{"ok", &checker.ok}, std::pair{"wrong", &checker.wrong},
                             std::pair{"error", &checker.error}}) {
    if (!value.contains(key)) continue;
    if (!value.at(key).is_string()) return bad(file, "/checker/" + std::string(key), "a regex");
    *target = value.at(key).get<std::string>();
  }
  if (auto compiled = check_checker(checker); !compiled.ok())
    return bad(file, "/checker", "regular expressions RE2 takes: " + compiled.error().message);
  return Status{};
}

Status load_timing(const json& document, const std::string& file, SutScenario& scenario) {
  for (auto [key, target] : {std::pair{"deadline_s", &scenario.deadline_seconds},
                             std::pair{"grace_s", &scenario.grace_seconds}}) {
    if (!document.contains(key)) continue;
    const json& value = document.at(key);
    if (!value.is_number() || !(value.get<double>() > 0 && value.get<double>() <= 3600))
      return bad(file, "/" + std::string(key), "seconds above 0, at most 3600");
    *target = value.get<double>();
  }
  return Status{};
}

Status load_roles(const json& document, const std::string& file, SutScenario& scenario) {
  const json roles = document.value("roles", json());
  if (!roles.is_array() || roles.empty()) return bad(file, "/roles", "a non-empty array of roles");
  for (size_t i = 0; i < roles.size(); ++i) {
    auto role = load_role(roles[i], file, i);
    if (!role.ok()) return std::move(role).take_error();
    scenario.roles.push_back(std::move(role).value());
  }
  auto judged = optional_string(document, "judged", scenario.roles.back().name, file, "/judged");
  if (!judged.ok()) return std::move(judged).take_error();
  scenario.judged = std::move(judged).value();
  for (const auto& role : scenario.roles)
    if (role.name == scenario.judged) return Status{};
  return bad(file, "/judged", "the name of one of its roles");
}

// A `sweep` block as `faultline sut sweep`'s flags, each field checked as the command checks it.
Result<std::vector<std::string>> load_sweep(const json& block, const std::string& file,
                                            double deadline_seconds) {
  if (!block.is_object())
    return bad(file, "/sweep", "an object {points, seed, profiles, jobs, budget, ...}");
  std::vector<std::string> flags;
  for (const auto& [key, value] : block.items()) {
    const std::string at = "/sweep/" + key;
    if (key == "points" && value.is_string() && (value == "first,middle,last" || value == "all")) {
      flags.insert(flags.end(), {"--points", value.get<std::string>()});
    } else if (key == "points") {
      return bad(file, at, "\"first,middle,last\" or \"all\"");
    } else if ((key == "seed" || key == "jobs" || key == "max_points") &&
               value.is_number_unsigned() && (key != "jobs" || (value >= 1 && value <= 64))) {
      const std::string flag = key == "max_points" ? "--max-points" : "--" + key;
      flags.insert(flags.end(), {flag, std::to_string(value.get<uint64_t>())});
    } else if (key == "seed" || key == "jobs" || key == "max_points") {
      return bad(file, at, key == "jobs" ? "an integer from 1 to 64" : "an integer from 0");
    } else if (key == "deadline_s" && value.is_number() && value > 0 && value <= 3600) {
      flags.insert(flags.end(), {"--deadline", std::to_string(value.get<double>())});
    } else if (key == "deadline_s") {
      return bad(file, at, "a point's seconds above 0, at most 3600");
    } else if (key == "budget") {
      const auto budget =
          value.is_string() ? parse_duration(value.get<std::string>()) : std::nullopt;
      if (!budget || static_cast<double>(budget->count()) >= deadline_seconds * 1000)
        return bad(file, at,
                   "a time such as \"90s\" or \"2m\", below the scenario's deadline_s (" +
                       std::to_string(static_cast<int>(deadline_seconds)) + " s)");
      flags.insert(flags.end(), {"--budget", value.get<std::string>()});
    } else if (key == "partial_ok" && value.is_boolean()) {
      if (value.get<bool>()) flags.emplace_back("--partial-ok");
    } else if (key == "partial_ok") {
      return bad(file, at, "true or false");
    } else if (key == "profiles" || key == "allow") {
      auto names = strings_at(value, file, at);
      if (!names.ok()) return std::move(names).take_error();
      std::string joined;
      for (const auto& name : names.value()) joined += (joined.empty() ? "" : ",") + name;
      std::string wrong;
      if (key == "allow") {
        wrong = check_allowed_verdicts(names.value());
      } else if (auto profiles = select_device_profiles(joined, default_devices_dir());
                 !profiles.ok()) {
        wrong = profiles.error().message;
      }
      if (!wrong.empty()) return bad(file, at, "names of " + key + ": " + wrong);
      flags.insert(flags.end(), {key == "allow" ? "--allow" : "--profile", joined});
    } else {
      return bad(file, at,
                 "one of points, seed, profiles, jobs, budget, max_points, deadline_s, allow, "
                 "partial_ok");
    }
  }
  if (!block.contains("budget")) {
    // No point starts after half the scenario's deadline: the last ones have time to end.
    flags.insert(flags.end(),
                 {"--budget", std::to_string(static_cast<int64_t>(deadline_seconds * 500)) + "ms"});
  }
  return flags;
}

}  // namespace

Result<SutScenario> load_sut_scenario(const std::string& path) {
  auto read = read_input_file(path, kLargestSutScenario);
  if (!read.ok()) return std::move(read).take_error();
  return parse_sut_scenario(path, read.value());
}

Result<SutScenario> parse_sut_scenario(const std::string& path, const std::string& text) {
  JsonTextProblem problem;
  const auto parsed = parse_json_strictly(text, problem);
  if (!parsed) return bad(path, problem.pointer.empty() ? "/" : problem.pointer, problem.expected);
  const json& document = *parsed;
  if (!document.is_object()) return bad(path, "/", "a JSON object (a SUT scenario)");
  SutScenario scenario;
  scenario.file = path;
  scenario.sha256 = sha256_hex(text);
  if (!is_folder_name(document.value("name", json())))
    return bad(path, "/name",
               "a scenario name of letters, digits, '.', '-' and '_' "
               "(\"sut.fi-pingpong.completion-error\")");
  scenario.name = document.at("name").get<std::string>();
  auto description = optional_string(document, "description", "", path, "/description");
  if (!description.ok()) return std::move(description).take_error();
  scenario.description = std::move(description).value();
  auto needs = optional_string(document, "needs", "ofi", path, "/needs");
  if (!needs.ok() || std::none_of(std::begin(kSutNeeds), std::end(kSutNeeds),
                                  [&](const char* kind) { return needs.value() == kind; }))
    return bad(path, "/needs",
               "one of " + std::accumulate(std::next(std::begin(kSutNeeds)), std::end(kSutNeeds),
                                           std::string(kSutNeeds[0]),
                                           [](const std::string& all, const char* kind) {
                                             return all + ", " + kind;
                                           }));
  scenario.needs = needs.value();
  auto expect_field = optional_string(document, "expect", document.contains("sweep") ? "pass" : "",
                                      path, "/expect");
  if (!expect_field.ok()) return std::move(expect_field).take_error();
  const std::string expect = expect_field.value();
  if (document.contains("sweep") && expect != "pass")
    return bad(path, "/expect",
               "pass for a sweep (it passes when every point is detected, masked or allowed)");
  const bool known = std::any_of(std::begin(kAllSutVerdicts), std::end(kAllSutVerdicts),
                                 [&](SutVerdict verdict) { return to_string(verdict) == expect; });
  if (!known) {
    std::string names;
    for (const SutVerdict verdict : kAllSutVerdicts)
      names += (names.empty() ? "" : ", ") + std::string(to_string(verdict));
    return bad(path, "/expect", "a verdict: " + names);
  }
  scenario.expect = expect;
  FAULTLINE_RETURN_IF_ERROR(load_roles(document, path, scenario));
  FAULTLINE_RETURN_IF_ERROR(load_checker(document, path, scenario.checker));
  FAULTLINE_RETURN_IF_ERROR(load_timing(document, path, scenario));
  if (document.contains("sweep")) {
    // The judged role is swept (the sweep chooses its faults); the others, a server it
    // connects to, run once beside the whole sweep.
    const auto swept =
        std::find_if(scenario.roles.begin(), scenario.roles.end(),
                     [&](const SutRole& role) { return role.name == scenario.judged; });
    if (!swept->faults.empty())
      return bad(path, "/roles",
                 "no faults in the judged role of a sweep (the sweep chooses them: every rank "
                 "its command starts, or a client whose server is another role)");
    auto sweep = load_sweep(document.at("sweep"), path, scenario.deadline_seconds);
    if (!sweep.ok()) return std::move(sweep).take_error();
    scenario.sweep = std::move(sweep).value();
  }
  return scenario;
}

std::string missing_for(const SutScenario& scenario) { return missing_for_needs(scenario.needs); }

std::string missing_for_needs(const std::string& needs) {
  if (needs == "stepmesh-verbs") {
    const std::string missing = missing_for_needs("verbs");
    return missing.empty() ? missing_for_needs("stepmesh") : missing;
  }
  if (needs == "stepmesh") {
    std::error_code error;
    const auto beside = std::filesystem::read_symlink("/proc/self/exe", error).parent_path() /
                        "tests/sut/stepmesh/sut_stepmesh_default";
    return std::filesystem::exists(beside, error)
               ? ""
               : "needs StepMesh built beside faultline (" + beside.string() +
                     ": configure with STEPMESH_SRC set, tests/sut/stepmesh/README.md)";
  }
  if (needs == "verbs") {
    std::error_code error;
    const bool any = std::filesystem::exists("/sys/class/infiniband", error) &&
                     !std::filesystem::is_empty("/sys/class/infiniband", error);
    return any ? ""
               : "needs a verbs device (none in /sys/class/infiniband): the Soft-RoCE lane runs it";
  }
  if (needs == "mpi" && !on_path("mpirun")) return "needs mpirun (Debian's openmpi-bin)";
  return "";
}

std::string verbs_device() {
  const char* named = std::getenv("FAULTLINE_VERBS_DEVICE");
  if (named != nullptr && *named != '\0') return named;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/class/infiniband", error))
    return entry.path().filename().string();
  return "";
}

std::string ipv4_gid_index(const std::string& device) {
  for (int index = 0; index < 16; ++index) {
    std::ifstream gid("/sys/class/infiniband/" + device + "/ports/1/gids/" + std::to_string(index));
    std::string text;
    if (gid >> text && text.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0)
      return std::to_string(index);
  }
  return "";
}

std::pair<std::string, std::string> gid_address_and_netdev(const std::string& device,
                                                           const std::string& index) {
  const std::string port = "/sys/class/infiniband/" + device + "/ports/1/";
  std::string gid;
  std::string netdev;
  std::ifstream(port + "gids/" + index) >> gid;
  std::ifstream(port + "gid_attrs/ndevs/" + index) >> netdev;
  // ::ffff:a.b.c.d as the kernel writes it (0000:...:ffff:AABB:CCDD): an IPv6 text.
  unsigned char binary[16];
  const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char address[INET_ADDRSTRLEN];
  if (inet_pton(AF_INET6, gid.c_str(), binary) != 1 || std::memcmp(binary, mapped, 12) != 0 ||
      inet_ntop(AF_INET, binary + 12, address, sizeof address) == nullptr)
    return {};
  return {address, netdev};
}

std::vector<std::string> expand(const std::vector<std::string>& command,
                                const Placeholders& values) {
  const std::pair<const char*, const std::string*> names[] = {
      {"{port}", &values.port},     {"{address}", &values.address},
      {"{device}", &values.device}, {"{gid}", &values.gid},
      {"{bin}", &values.bin},       {"{device_address}", &values.device_address},
      {"{netdev}", &values.netdev}};
  // One pass over each argument: a value is copied as it is, never searched for placeholders
  // again (a port holding "{port}" is not expanded forever), and no argument is split or
  // re-parsed.
  std::vector<std::string> expanded;
  for (const std::string& argument : command) {
    std::string out;
    for (size_t at = 0; at < argument.size();) {
      const auto* found = std::find_if(std::begin(names), std::end(names), [&](const auto& name) {
        return argument.compare(at, std::strlen(name.first), name.first) == 0;
      });
      if (found == std::end(names)) {
        out += argument[at++];
        continue;
      }
      out += *found->second;
      at += std::strlen(found->first);
    }
    expanded.push_back(std::move(out));
  }
  return expanded;
}

}  // namespace faultline::harness::sut
