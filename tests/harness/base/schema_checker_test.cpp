// The schema checker on numbers valijson reads as int64_t: counts of 2^63 and above are in
// range for a schema's non-negative integers.
#include "base/schema_checker.hpp"

#include <catch2/catch.hpp>
#include <cstdint>

using faultline::harness::SchemaChecker;
using nlohmann::json;

TEST_CASE("counts of 2^63 and above are non-negative integers to the schema check", "[unit]") {
  const SchemaChecker checker(
      R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}})");
  for (const uint64_t count : {uint64_t{1} << 63, UINT64_MAX, uint64_t{7}})
    CHECK(checker.check(json{{"n", count}}).empty());
  CHECK(checker.check(json{{"n", json{{"deep", UINT64_MAX}}}}).size() == 1);  // still an object
  CHECK(checker.check(json{{"n", -1}}).size() == 1);
}
