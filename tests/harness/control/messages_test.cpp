#include "faultline/harness/control/messages.hpp"

#include <catch2/catch.hpp>

using faultline::ErrorCode;
using faultline::harness::control::validate_message;

namespace {
nlohmann::json message(const std::string& type, nlohmann::json body = nlohmann::json::object()) {
  body["type"] = type;
  body["seq"] = 0U;
  body["session"] = "s";
  return body;
}
}  // namespace

TEST_CASE("a well-formed message of an expected type is valid", "[unit][control]") {
  CHECK(validate_message(message("heartbeat"), {"heartbeat"}).ok());
  CHECK(validate_message(message("step", {{"run_id", 3U}, {"name", "post"}}), {"step"}).ok());
}

TEST_CASE("messages lacking envelope fields, or of unknown types, are violations",
          "[unit][control]") {
  auto no_seq = message("heartbeat");
  no_seq.erase("seq");
  auto negative_seq = message("heartbeat");
  negative_seq["seq"] = -1;
  for (const auto& bad : {nlohmann::json::array(), no_seq, negative_seq, message("hello")}) {
    CAPTURE(bad.dump());
    const auto status = validate_message(bad, {"heartbeat", "hello"});
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().code == ErrorCode::kProtocolViolation);
  }
}

TEST_CASE("a message out of order names what was expected", "[unit][control]") {
  const auto status = validate_message(message("heartbeat"), {"auth"});
  REQUIRE_FALSE(status.ok());
  CHECK_THAT(status.error().message, Catch::Contains("out of order"));
  CHECK_THAT(status.error().message, Catch::Contains("expected auth"));
}

TEST_CASE("a field of the wrong kind is named", "[unit][control]") {
  const auto status =
      validate_message(message("step", {{"run_id", "3"}, {"name", "post"}}), {"step"});
  REQUIRE_FALSE(status.ok());
  CHECK_THAT(status.error().message, Catch::Contains("\"step\" message lacks \"run_id\""));
}
