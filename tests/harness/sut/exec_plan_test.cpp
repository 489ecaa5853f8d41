// `--fault` in compact form: keys of the plan's schema, values typed as the plan expects.
#include <catch2/catch.hpp>

#include "faultline/harness/sut/exec_plan.hpp"

using faultline::harness::sut::parse_fault_spec;

TEST_CASE("a compact fault gives numbers, booleans and names their JSON types", "[unit]") {
  const auto fault =
      parse_fault_spec("status=REM_ACCESS_ERR,nth=5,qp_error=true,probability=0.25,side=recv");
  REQUIRE(fault.ok());
  CHECK(fault.value() == nlohmann::json{{"status", "REM_ACCESS_ERR"},
                                        {"nth", 5},
                                        {"qp_error", true},
                                        {"probability", 0.25},
                                        {"side", "recv"}});
  // A number too large for any counter is still a number: the plan's check refuses it.
  const auto huge = parse_fault_spec("nth=99999999999999999999999");
  REQUIRE(huge.ok());
  CHECK(huge.value().at("nth").is_number());
}

TEST_CASE("a compact fault that is not key=value pairs says what was expected", "[unit]") {
  for (const char* spec : {"nth", "=5", "nth=", "status=X,,nth=1"}) {
    const auto fault = parse_fault_spec(spec);
    REQUIRE_FALSE(fault.ok());
    CHECK_THAT(fault.error().message, Catch::Contains("expected key=value pairs"));
  }
}
