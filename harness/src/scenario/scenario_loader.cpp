#include "faultline/harness/scenario/scenario_loader.hpp"

#include "faultline/harness/base/strict_json.hpp"
#include "faultline/harness/control/frame.hpp"
#include "faultline/harness/scenario/derivation.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "base/schema_checker.hpp"
#include "faultline/core/join.hpp"
#include "faultline/core/json_depth.hpp"
#include "faultline/harness/scenario/step_ops.hpp"
#include "faultline/transports/fault/fault_spec.hpp"
#include "scenario_schema.hpp"

namespace faultline::harness {

namespace {

using nlohmann::json;

// "8G", "512M", "65536": bytes, or with a K, M or G suffix; nullopt when it is none of them.
std::optional<uint64_t> memory_from_text(const std::string& text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  const std::string suffix(end);
  const int shift = suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : 0;
  if (end == text.c_str() || text[0] == '-' || (!suffix.empty() && shift == 0) || value == 0)
    return std::nullopt;
  return static_cast<uint64_t>(value) << shift;
}

// What a scenario document may weigh: a control frame less what a run_scenario message adds.
constexpr size_t kMaxScenarioBytes = control::kMaxFrameSize - 64 * 1024;

const SchemaChecker& scenario_schema() {
  static const SchemaChecker checker(scenario_schema_text());
  return checker;
}

// Checks the schema cannot express. Each problem names the pointer of the field at fault.
class SemanticChecker {
 public:
  SemanticChecker(const std::string& file, json& document, const LoaderOptions& options,
                  std::vector<LoadProblem>& problems)
      : file_(file), document_(document), options_(options), problems_(problems) {
    for (const auto& [role, _] : document_.at("roles").items()) roles_.push_back(role);
  }

  void check() {
    const Topology topology = topology_of(document_);
    // The rest refers to the roles: check it only once they are right.
    if (topology == Topology::kPair && roles_.size() != 2) {
      problem("/roles", "two roles for a pair scenario; got " + std::to_string(roles_.size()));
      return;
    }
    if (topology == Topology::kRing && roles_.size() != 1) {
      problem("/roles", "one role for a ring scenario (every rank plays it); got " +
                            std::to_string(roles_.size()));
      return;
    }
    if (document_.contains("faults")) {
      auto& faults = document_.at("faults");
      for (size_t i = 0; i < faults.size(); ++i)
        check_fault(faults[i], "/faults/" + std::to_string(i));
    }
    auto& steps = document_.at("steps");
    for (size_t i = 0; i < steps.size(); ++i) check_step(steps[i], "/steps/" + std::to_string(i));
    check_connects_paired(steps);
    check_memory_totals(steps);
  }

 private:
  void problem(const std::string& pointer, std::string expected) {
    problems_.push_back({file_, pointer, std::move(expected)});
  }

  bool check_role(const json& object, const std::string& pointer) {
    if (!object.contains("role")) return true;
    const std::string role = object.at("role");
    for (const auto& known : roles_) {
      if (known == role) return true;
    }
    problem(pointer + "/role",
            "one of the scenario's roles (" + join(roles_) + "); got \"" + role + "\"");
    return false;
  }

  // What a step makes its side hold in memory, as far as its fields say.
  // Each role's memory within the bound, so an oversized scenario is refused before it runs
  // rather than OOM-killed as if the code under test crashed.
  void check_memory_totals(const json& steps) {
    std::map<std::string, uint64_t> totals;
    std::map<std::string, std::string> largest_step;
    std::map<std::string, uint64_t> largest;
    for (size_t i = 0; i < steps.size(); ++i) {
      // What the op registered for its steps holds; some ops' memory is held by every role.
      const auto op = step_ops().find(steps[i].at("op").get<std::string>());
      if (op == step_ops().end() || op->second.memory == nullptr) continue;
      const uint64_t bytes = op->second.memory(steps[i]);
      if (bytes == 0) continue;
      const bool every_role = !steps[i].contains("role") || op->second.every_role_holds_it;
      for (const auto& role : roles_) {
        if (!every_role && steps[i].at("role") != role) continue;
        totals[role] += bytes;
        if (bytes > largest[role]) {
          largest[role] = bytes;
          largest_step[role] = "/steps/" + std::to_string(i);
        }
      }
    }
    if (options_.max_memory_bytes == 0) {
      const char* text = std::getenv("FAULTLINE_MAX_SCENARIO_MEMORY");
      problem("", std::string("FAULTLINE_MAX_SCENARIO_MEMORY as bytes, or with K, M or G; got '") +
                      (text != nullptr ? text : "") + "'");
      return;
    }
    for (const auto& [role, total] : totals) {
      if (total <= options_.max_memory_bytes) continue;
      problem(largest_step[role],
              "at most " + std::to_string(options_.max_memory_bytes) +
                  " bytes of memory for role " + role +
                  " in the whole scenario ($FAULTLINE_MAX_SCENARIO_MEMORY); its steps ask " +
                  "for " + std::to_string(total) + ", this one " + std::to_string(largest[role]));
    }
  }

  // A connect is an exchange with the peer: every role connects as often, or one waits forever.
  void check_connects_paired(const json& steps) {
    std::map<std::string, size_t> connects;
    for (const auto& role : roles_) connects[role] = 0;
    std::string last_pointer;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].value("op", "") != "connect") continue;
      last_pointer = "/steps/" + std::to_string(i);
      if (!steps[i].contains("role")) {
        for (auto& [role, count] : connects) ++count;
      } else if (auto found = connects.find(steps[i].value("role", "")); found != connects.end()) {
        ++found->second;
      }
    }
    std::string counts;
    bool paired = true;
    for (const auto& [role, count] : connects) {
      paired = paired && count == connects.begin()->second;
      counts += (counts.empty() ? "" : ", ") + role + " " + std::to_string(count);
    }
    if (!paired)
      problem(last_pointer,
              "a connect for every role (each is an exchange with the peer); got " + counts);
  }

  // A derivation explains a config value: it must name one the step sets, and give it.
  void check_derivations(const json& step, const std::string& pointer) {
    const json config = step.value("config", json::object());
    const json derivations = step.value("derivations", json::object());
    for (const auto& [field, text] : derivations.items()) {
      const std::string at = pointer + "/derivations/" + field;
      if (!config.contains(field) || !config.at(field).is_number_unsigned()) {
        problem(at, "a derivation of a value the step's config sets; config has no " + field);
        continue;
      }
      auto value = evaluate_derivation(text.get<std::string>());
      if (!value.ok()) {
        problem(at, value.error().message);
      } else if (*value != config.at(field).get<uint64_t>()) {
        problem(at, "a derivation that gives config." + field + " (" + config.at(field).dump() +
                        "); \"" + text.get<std::string>() + "\" gives " + std::to_string(*value));
      }
    }
  }

  void check_fault(json& fault, const std::string& pointer) {
    check_role(fault, pointer);
    if (fault.contains("rank") && topology_of(document_) != Topology::kRing)
      problem(pointer + "/rank", "no rank in a pair scenario (a rank names one agent of a ring)");
    if (fault.at("kind") != "limits" || !fault.contains("profile")) return;
    const std::string name = fault.at("profile");
    const std::string path = options_.devices_dir + "/" + name + ".json";
    auto read = read_json_file(path);
    const json profile = read.ok() ? std::move(read).value() : json();
    if (!profile.is_object() || !profile.contains("limits") || !profile.at("limits").is_object()) {
      problem(pointer + "/profile", "a device profile in " + options_.devices_dir +
                                        " (a JSON file with \"limits\"); none readable at " + path);
      return;
    }
    // The profile's limits, unless the fault itself overrides one. A limit above INT64_MAX
    // (libfabric's "no limit", SIZE_MAX) becomes INT64_MAX: the same in effect, and within what
    // the schema takes, which a scenario child checks the merged document against again.
    constexpr uint64_t kLargestLimit = std::numeric_limits<int64_t>::max();
    for (const auto& limit : transports::fault::limit_names(transports::fault::kDecorator)) {
      const auto& value = profile.at("limits").value(limit, json());
      if (!fault.contains(limit) && value.is_number_unsigned())
        fault[limit] = std::min(value.get<uint64_t>(), kLargestLimit);
    }
  }

  void check_segments(const json& step, const std::string& key, const std::string& pointer,
                      const std::vector<std::string>& step_roles) {
    if (!step.contains(key)) return;
    const auto& segments = step.at(key);
    for (size_t j = 0; j < segments.size(); ++j) {
      const std::string buffer = segments[j].at("buffer");
      for (const auto& role : step_roles) {
        if (buffers_[role].count(buffer) == 0) {
          problem(pointer + "/" + key + "/" + std::to_string(j) + "/buffer",
                  "a buffer registered by role " + role + " in an earlier step; got \"" + buffer +
                      "\"");
          break;
        }
      }
    }
  }

  void check_step(const json& step, const std::string& pointer) {
    const std::string op = step.at("op");
    const auto& ops = step_ops();
    if (ops.count(op) == 0) {
      std::vector<std::string> names;
      names.reserve(ops.size());
      for (const auto& [name, _] : ops) names.push_back(name);
      problem(pointer + "/op", "a step op (" + join(names) + "); got \"" + op + "\"");
      return;
    }
    if (!check_role(step, pointer)) return;
    const std::vector<std::string> step_roles =
        step.contains("role") ? std::vector<std::string>{step.at("role")} : roles_;
    if (op == "register") {
      for (const auto& role : step_roles)
        buffers_[role].insert(step.at("buffer").get<std::string>());
    }
    check_segments(step, "segments", pointer, step_roles);
    check_derivations(step, pointer);
    if (step.contains("buffer") && op == "check_data") {
      for (const auto& role : step_roles) {
        if (buffers_[role].count(step.at("buffer")) == 0) {
          problem(pointer + "/buffer", "a buffer registered by role " + role +
                                           " in an earlier step; got " + step.at("buffer").dump());
          break;
        }
      }
    }
    if (step.contains("remote")) {
      const std::string buffer = step.at("remote").at("buffer");
      for (const auto& role : step_roles) {
        const bool registered_by_peer =
            std::any_of(roles_.begin(), roles_.end(), [&](const std::string& other) {
              return other != role && buffers_[other].count(buffer);
            });
        if (!registered_by_peer) {
          problem(pointer + "/remote/buffer", "a buffer registered by the peer of role " + role +
                                                  " in an earlier step; got \"" + buffer + "\"");
          break;
        }
      }
    }
  }

  const std::string& file_;
  json& document_;
  const LoaderOptions& options_;
  std::vector<LoadProblem>& problems_;
  std::vector<std::string> roles_;
  std::map<std::string, std::set<std::string>> buffers_;
};

// Each fault of the document that is not of the fault language as scenario files speak it (the
// decorator's and the kv protocol's kinds): (pointer, what was expected).
std::vector<std::pair<std::string, std::string>> fault_language_problems(const json& document) {
  std::vector<std::pair<std::string, std::string>> found;
  const auto faults = document.is_object() ? document.find("faults") : document.end();
  if (!document.is_object() || faults == document.end() || !faults->is_array()) return found;
  using namespace transports::fault;
  for (size_t i = 0; i < faults->size(); ++i) {
    auto fault =
        parse_fault((*faults)[i], kDecorator | kProtocolHook, "/faults/" + std::to_string(i));
    if (fault.ok()) continue;
    // The parser's message is "POINTER: expected WHAT".
    constexpr std::string_view kExpected = ": expected ";
    const std::string& message = fault.error().message;
    const size_t split = message.find(kExpected);
    if (split == std::string::npos) {
      found.emplace_back("/faults/" + std::to_string(i), message);
    } else {
      found.emplace_back(message.substr(0, split), message.substr(split + kExpected.size()));
    }
  }
  return found;
}

}  // namespace

std::string LoadProblem::describe() const {
  // An option's problem ("--suite") has no place in a document to point at.
  const bool option = file.starts_with("--");
  return file + ": " +
         (option ? "" : (pointer.empty() ? std::string("(document)") : pointer) + ": ") +
         "expected " + expected;
}

std::optional<ScenarioSpec> load_scenario_text(const std::string& name, const std::string& text,
                                               const LoaderOptions& options,
                                               std::vector<LoadProblem>& problems) {
  if (const size_t depth = json_nesting_depth(text); depth > kMaxJsonDepth) {
    problems.push_back({name, "",
                        "a scenario nesting at most " + std::to_string(kMaxJsonDepth) +
                            " levels; it nests " + std::to_string(depth)});
    return std::nullopt;
  }
  JsonTextProblem bad_text;
  auto parsed = parse_json_strictly(text, bad_text);
  if (!parsed) {
    problems.push_back({name, std::move(bad_text.pointer), std::move(bad_text.expected)});
    return std::nullopt;
  }
  json document = std::move(*parsed);
  // The fault language's own check first: it names an unknown kind or key and the ones allowed.
  if (auto faults = fault_language_problems(document); !faults.empty()) {
    for (auto& problem : faults) problems.push_back({name, problem.first, problem.second});
    return std::nullopt;
  }
  if (auto explained = scenario_schema().check(document); !explained.empty()) {
    for (auto& problem : explained)
      problems.push_back({name, std::move(problem.pointer), std::move(problem.expected)});
    return std::nullopt;
  }
  const size_t before = problems.size();
  SemanticChecker(name, document, options, problems).check();
  if (problems.size() != before) return std::nullopt;
  // Agents get the document in one control frame, with room for the rest of the message.
  if (const size_t bytes = document.dump().size(); bytes > kMaxScenarioBytes) {
    problems.push_back({name, "",
                        "a scenario of at most " + std::to_string(kMaxScenarioBytes) +
                            " bytes as sent to the agents (the control channel's frames hold " +
                            std::to_string(control::kMaxFrameSize) + "); it is " +
                            std::to_string(bytes)});
    return std::nullopt;
  }

  ScenarioSpec spec;
  spec.id = document.at("id");
  spec.title = document.at("title");
  spec.description = document.value("description", "");
  spec.tags = document.at("tags").get<std::vector<std::string>>();
  spec.source = name;
  spec.sha256 = sha256_hex(text);
  spec.roles.clear();
  for (const auto& [role, _] : document.at("roles").items()) spec.roles.push_back(role);
  spec.deadline = std::chrono::milliseconds(document.value("timeout_ms", 30000));
  spec.topology = topology_of(document);
  spec.document = std::move(document);
  return spec;
}

uint64_t LoaderOptions::default_max_scenario_memory() {
  constexpr uint64_t kDefault = 8ULL << 30;
  const char* text = std::getenv("FAULTLINE_MAX_SCENARIO_MEMORY");
  if (text == nullptr || *text == '\0') return kDefault;
  return memory_from_text(text).value_or(0);  // 0: unreadable, named at the first check
}

std::vector<std::string> scenario_schema_problems(const nlohmann::json& document) {
  std::vector<std::string> lines;
  for (const auto& [pointer, expected] : fault_language_problems(document))
    lines.push_back(pointer + ": expected " + expected);
  if (!lines.empty()) return lines;
  return scenario_schema().problem_lines(document);
}

std::optional<ScenarioSpec> load_scenario_file(const std::string& path,
                                               const LoaderOptions& options,
                                               std::vector<LoadProblem>& problems) {
  auto text = read_input_file(path);
  if (!text.ok()) {
    problems.push_back(
        {path, "", "a readable scenario file; " + text.error().message.substr(path.size() + 2)});
    return std::nullopt;
  }
  return load_scenario_text(path, text.value(), options, problems);
}

}  // namespace faultline::harness
