#include "faultline/harness/diagnose/workload_limits.hpp"

#include "faultline/harness/base/strict_json.hpp"
#include "faultline/harness/scenario/derivation.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "faultline/transports/fault/fault_spec.hpp"

namespace faultline::harness::diagnose {

namespace {

// The EndpointConfig field a workload may set.
uint32_t* config_field(transports::EndpointConfig& config, const std::string& name) {
  if (name == "send_depth") return &config.send_depth;
  if (name == "recv_depth") return &config.recv_depth;
  if (name == "cq_depth") return &config.cq_depth;
  if (name == "max_send_sge") return &config.max_send_sge;
  if (name == "max_recv_sge") return &config.max_recv_sge;
  if (name == "max_inline") return &config.max_inline;
  return nullptr;
}

// One endpoint object of a workload file (`where`: its pointer), its values evaluated.
Result<WorkloadEndpoint> read_endpoint(const nlohmann::json& endpoint, const std::string& where,
                                       const std::map<std::string, uint64_t>& inputs,
                                       const std::string& path) {
  auto problem = [&path](const std::string& at, const std::string& what) {
    return Error{ErrorCode::kInvalidArgument, path + ": " + at + ": " + what};
  };
  if (!endpoint.is_object() || endpoint.empty())
    return problem(where,
                   "expected an object of send_depth, recv_depth, cq_depth, "
                   "max_send_sge, max_recv_sge, max_inline");
  WorkloadEndpoint read;
  for (const auto& [name, value] : endpoint.items()) {
    uint32_t* field = config_field(read.config, name);
    const std::string at = where + "/" + name;
    if (field == nullptr)
      return problem(at,
                     "unknown field; expected send_depth, recv_depth, cq_depth, "
                     "max_send_sge, max_recv_sge or max_inline");
    uint64_t number = 0;
    if (value.is_number_unsigned()) {
      number = value.get<uint64_t>();
    } else if (value.is_string()) {
      auto evaluated = evaluate_formula(value.get<std::string>(), inputs);
      if (!evaluated.ok()) return problem(at, evaluated.error().message);
      number = evaluated->value;
      read.config.derivations[name] = evaluated->derivation;
    } else {
      return problem(at, "expected a count or a formula over the inputs");
    }
    if (number > UINT32_MAX) {
      // A value no device takes: keep it visible rather than wrapping around.
      number = UINT32_MAX;
      read.config.derivations[name] += " (above 2^32, shown as " + std::to_string(UINT32_MAX) + ")";
    }
    *field = static_cast<uint32_t>(number);
    read.fields.insert(name);
  }
  return read;
}

}  // namespace

Result<Workload> load_workload(const std::string& path) {
  auto problem = [&path](const std::string& where, const std::string& what) {
    return Error{ErrorCode::kInvalidArgument, path + ": " + where + ": " + what};
  };
  auto read = read_json_file(path, size_t{1} << 20);
  if (!read.ok()) return std::move(read).take_error();
  const nlohmann::json document = std::move(read).value();
  if (!document.is_object()) return problem("(document)", "expected a JSON object");
  for (const auto& [key, value] : document.items()) {
    if (key != "workload" && key != "description" && key != "inputs" && key != "endpoint" &&
        key != "endpoints" && key != "device_limits")
      return problem("/" + key,
                     "unknown field; expected workload, description, inputs, endpoint, "
                     "endpoints or device_limits");
  }
  Workload workload;
  workload.source = path;
  workload.name = document.value("workload", path);
  std::map<std::string, uint64_t> inputs;
  const nlohmann::json input_values = document.value("inputs", nlohmann::json::object());
  for (const auto& [name, value] : input_values.items()) {
    if (!value.is_number_unsigned()) return problem("/inputs/" + name, "expected a count >= 0");
    inputs[name] = value.get<uint64_t>();
  }
  if (document.contains("endpoint") == document.contains("endpoints"))
    return problem("/endpoint",
                   "expected one endpoint object, or \"endpoints\": an object of named ones "
                   "(not both)");
  if (document.contains("endpoint")) {
    auto one = read_endpoint(document.at("endpoint"), "/endpoint", inputs, path);
    if (!one.ok()) return one.error();
    workload.endpoints.push_back(std::move(one).value());
  } else {
    const nlohmann::json& named = document.at("endpoints");
    if (!named.is_object() || named.empty())
      return problem("/endpoints", "expected an object of named endpoints (\"dispatch\": {...})");
    for (const auto& [name, endpoint] : named.items()) {
      auto one = read_endpoint(endpoint, "/endpoints/" + name, inputs, path);
      if (!one.ok()) return one.error();
      one->name = name;
      workload.endpoints.push_back(std::move(one).value());
    }
  }
  const nlohmann::json device_limits = document.value("device_limits", nlohmann::json::object());
  for (const auto& [name, value] : device_limits.items()) {
    const auto known = transports::fault::limit_names(transports::fault::kDecorator);
    if (std::find(known.begin(), known.end(), name) == known.end() || !value.is_number_unsigned())
      return problem("/device_limits/" + name, "expected a device limit name with a count");
    workload.device_limits[name] = value.get<uint64_t>();
  }
  return workload;
}

}  // namespace faultline::harness::diagnose
