// The interposers' plan language: a `limits` rule takes every cap a target profile can hold,
// and the device identity it shows; a value out of range is refused by field.
#include "faultline/transports/interpose/fault_rules.hpp"

#include <catch2/catch.hpp>

using faultline::transports::interpose::parse_fault_rules;
using nlohmann::json;

TEST_CASE("a limits rule takes SRQ, read/atomic, atomics, MR size caps and the vendor ids",
          "[unit]") {
  const json plan = {{"faults",
                      {{{"kind", "limits"},
                        {"max_srq_wr", 32768},
                        {"max_srq_sge", 64},
                        {"max_qp_rd_atom", 8},
                        {"atomic_cap", 0},
                        {"max_mr_size", UINT64_MAX},
                        {"vendor_id", 0x8086},
                        {"vendor_part_id", 5522}}}}};
  auto parsed = parse_fault_rules(plan);
  INFO(plan.dump() << (parsed.ok() ? "" : parsed.error().describe()));
  REQUIRE(parsed.ok());
  const auto& caps = parsed->rules.at(0).caps;
  CHECK(caps.max_srq_wr == 32768U);
  CHECK(caps.max_srq_sge == 64U);
  CHECK(caps.max_qp_rd_atom == 8U);
  CHECK(caps.atomic_cap == 0U);
  CHECK(caps.max_mr_size == UINT64_MAX);
  CHECK(caps.vendor_id == 0x8086U);
  CHECK(caps.vendor_part_id == 5522U);
  CHECK_FALSE(caps.max_qp_wr.has_value());
}

TEST_CASE("a limits rule refuses an atomic_cap beyond global, and one with nothing in it",
          "[unit]") {
  auto atomic = parse_fault_rules({{"faults", {{{"kind", "limits"}, {"atomic_cap", 3}}}}});
  REQUIRE_FALSE(atomic.ok());
  CHECK_THAT(atomic.error().message,
             Catch::Contains("/faults/0/atomic_cap") && Catch::Contains("from 0 to 2"));
  auto empty = parse_fault_rules({{"faults", {{{"kind", "limits"}}}}});
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(empty.error().message, Catch::Contains("max_srq_wr") && Catch::Contains("vendor_id"));
}
