#include "faultline/harness/control/messages.hpp"

#include <string>
#include <vector>

namespace faultline::harness::control {

namespace {

using Kind = nlohmann::json::value_t;

struct Field {
  std::string_view name;
  std::string_view kind;  // "string", "unsigned", "number", "object", "array", "boolean"
};

struct MessageSchema {
  std::string_view type;
  // A vector, not an initializer_list: the array behind an initializer_list member does not
  // outlive the initialization under clang (the control-message fuzzer found the crash).
  std::vector<Field> fields;
};

const std::vector<MessageSchema> kSchemas{
    MessageSchema{"challenge", {{"nonce", "string"}, {"version", "unsigned"}}},
    MessageSchema{
        "auth",
        {{"answer", "string"}, {"nonce", "string"}, {"version", "unsigned"}, {"hello", "object"}}},
    MessageSchema{"welcome",
                  {{"agent_id", "string"}, {"heartbeat_ms", "unsigned"}, {"answer", "string"}}},
    MessageSchema{"reject", {{"reason", "string"}}},
    MessageSchema{"heartbeat", {}},
    MessageSchema{"shutdown", {}},
    MessageSchema{"run_scenario",
                  {{"run_id", "unsigned"},
                   {"scenario", "string"},
                   {"role", "string"},
                   {"params", "object"},
                   {"target", "object"},
                   {"deadline_ms", "unsigned"}}},
    MessageSchema{"abort_scenario", {{"run_id", "unsigned"}}},
    MessageSchema{"run_result",
                  {{"run_id", "unsigned"},
                   {"id", "string"},
                   {"suite", "string"},
                   {"verdict", "string"},
                   {"duration_ms", "number"}}},
    MessageSchema{"endpoint_info", {{"run_id", "unsigned"}, {"info", "object"}}},
    MessageSchema{"peer_info", {{"run_id", "unsigned"}, {"info", "object"}}},
    MessageSchema{"barrier", {{"run_id", "unsigned"}, {"name", "string"}}},
    MessageSchema{"barrier_release", {{"run_id", "unsigned"}, {"name", "string"}}},
    MessageSchema{"step", {{"run_id", "unsigned"}, {"name", "string"}}},
    MessageSchema{"scenario_result", {{"run_id", "unsigned"}, {"verdict", "string"}}},
    // A role of a program job (program_jobs.hpp): its body is for the agent's launcher.
    MessageSchema{"run_program",
                  {{"run_id", "unsigned"},
                   {"job", "string"},
                   {"role", "string"},
                   {"body", "object"},
                   {"values", "object"},
                   {"listens", "boolean"}}},
    MessageSchema{"program_started",
                  {{"run_id", "unsigned"}, {"role", "string"}, {"values", "object"}}},
    MessageSchema{"program_result",
                  {{"run_id", "unsigned"}, {"role", "string"}, {"summary", "object"}}},
};

bool has_kind(const nlohmann::json& value, std::string_view kind) {
  if (kind == "string") return value.is_string();
  if (kind == "unsigned") return value.is_number_unsigned();
  if (kind == "object") return value.is_object();
  if (kind == "array") return value.is_array();
  if (kind == "boolean") return value.is_boolean();
  if (kind == "number") return value.is_number();
  return false;
}

Error violation(std::string message) {
  return Error{ErrorCode::kProtocolViolation, std::move(message)};
}

}  // namespace

Status validate_message(const nlohmann::json& message,
                        std::initializer_list<std::string_view> allowed) {
  if (!message.is_object()) return violation("message is not a JSON object");
  for (const Field& field :
       {Field{"type", "string"}, Field{"seq", "unsigned"}, Field{"session", "string"}}) {
    if (!message.contains(field.name) || !has_kind(message.at(field.name), field.kind)) {
      return violation("message lacks \"" + std::string(field.name) + "\" (" +
                       std::string(field.kind) + ")");
    }
  }
  const std::string type = message.at("type");
  const MessageSchema* schema = nullptr;
  for (const auto& candidate : kSchemas) {
    if (candidate.type == type) schema = &candidate;
  }
  if (schema == nullptr) return violation("unknown message type \"" + type + "\"");
  bool expected = false;
  std::string expected_types;
  for (std::string_view name : allowed) {
    expected = expected || name == type;
    expected_types += (expected_types.empty() ? "" : ", ") + std::string(name);
  }
  if (!expected) {
    return violation("message type \"" + type + "\" is out of order here; expected " +
                     expected_types);
  }
  for (const Field& field : schema->fields) {
    if (!message.contains(field.name) || !has_kind(message.at(field.name), field.kind)) {
      return violation("\"" + type + "\" message lacks \"" + std::string(field.name) + "\" (" +
                       std::string(field.kind) + ")");
    }
  }
  return {};
}

}  // namespace faultline::harness::control
