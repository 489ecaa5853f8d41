#include "faultline/harness/control/peer_record_checks.hpp"

#include "faultline/harness/control/agent.hpp"

#include "base/schema_checker.hpp"
#include "base/schema_texts.hpp"

namespace faultline::harness {

namespace {

// The report schema with its root replaced by one of its definitions.
std::string definition_schema(const std::string& definition) {
  nlohmann::json schema = nlohmann::json::parse(report_schema_text());
  return nlohmann::json{{"$schema", schema.at("$schema")},
                        {"$ref", "#/definitions/" + definition},
                        {"definitions", schema.at("definitions")}}
      .dump();
}

}  // namespace

std::vector<std::string> side_result_problems(const nlohmann::json& side) {
  static const std::string text = definition_schema("side");
  static const SchemaChecker checker(text.c_str());
  return checker.problem_lines(side);
}

Result<nlohmann::json> side_from_result(const nlohmann::json& message) {
  nlohmann::json side = message;
  side.erase("seq");
  side.erase("session");
  side.erase("type");
  const auto problems = side_result_problems(side);
  if (problems.empty()) return side;
  return Error{
      ErrorCode::kProtocolViolation,
      "sent a scenario_result the report cannot hold: " + problems.front() +
          (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : "")};
}

nlohmann::json agent_record_of(const nlohmann::json& hello, const std::string& id,
                               const std::string& remote) {
  const nlohmann::json host = hello.value("host", nlohmann::json(""));
  return {{"id", id},
          {"name", hello.contains("name") ? hello.at("name")
                                          : nlohmann::json(agent_name_from_host(
                                                host.is_string() ? host.get<std::string>() : ""))},
          {"rail", hello.value("rail", nlohmann::json(""))},
          {"switch", hello.value("switch", nlohmann::json(""))},
          {"host", host},
          {"pid", hello.value("pid", nlohmann::json(0))},
          {"remote", remote},
          {"target", hello.value("target", nlohmann::json::object())},
          {"devices", hello.value("devices", nlohmann::json::array())}};
}

std::vector<std::string> agent_record_problems(const nlohmann::json& agent) {
  static const std::string text = definition_schema("agent");
  static const SchemaChecker checker(text.c_str());
  return checker.problem_lines(agent);
}

}  // namespace faultline::harness
