// The scenario and device-profile schemas are how editors and other tools see the fault
// language; the one kind table and the one limit table are what faultline applies. They list
// the same kinds and the same limits.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "faultline/transports/fault/fault_spec.hpp"

using namespace faultline::transports::fault;
using nlohmann::json;

namespace {

json schema(const std::string& name) {
  std::ifstream file(std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/schema/" + name);
  REQUIRE(file);
  return json::parse(file);
}

std::set<std::string> keys_of(const json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

std::set<std::string> names_of(const std::vector<std::string>& names) {
  return {names.begin(), names.end()};
}

}  // namespace

TEST_CASE("the scenario schema lists the kinds and limits scenario files can be given", "[unit]") {
  const json fault = schema("scenario.schema.json").at("definitions").at("fault");
  std::set<std::string> kinds;
  for (const auto& info : fault_kinds())
    if ((info.appliers & (kDecorator | kProtocolHook)) != 0) kinds.emplace(info.name);
  const auto listed = fault.at("properties").at("kind").at("enum").get<std::set<std::string>>();
  CHECK(listed == kinds);
  for (const auto& branch : fault.at("allOf")) {
    if (branch.at("if").at("properties").at("kind").value("const", "") != "limits") continue;
    std::set<std::string> limits = keys_of(branch.at("then").at("properties"));
    for (const char* other : {"role", "kind", "profile", "rank"}) limits.erase(other);
    CHECK(limits == names_of(limit_names(kDecorator)));
  }
}

TEST_CASE("the device profile schema lists every limit of the table", "[unit]") {
  const json limits = schema("device-profile.schema.json").at("properties").at("limits");
  CHECK(keys_of(limits.at("properties")) == names_of(limit_names(kDecorator | kInterposer)));
}
