// The fault language's one parser: strict about kinds and keys, refusing what the applier at
// hand cannot apply with the reason, and the limits of limit_table.hpp in every cap.
#include "faultline/transports/fault/fault_spec.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <cstring>

using namespace faultline::transports::fault;
using nlohmann::json;

TEST_CASE("a limits fault takes SRQ, read/atomic, atomics, MR size caps and the vendor ids",
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
  auto parsed = parse_fault_set(plan, kInterposer, "plan");
  INFO(plan.dump() << (parsed.ok() ? "" : parsed.error().describe()));
  REQUIRE(parsed.ok());
  const auto& caps = parsed->faults.at(0).caps;
  CHECK(caps.max_srq_wr == 32768U);
  CHECK(caps.max_srq_sge == 64U);
  CHECK(caps.max_qp_rd_atom == 8U);
  CHECK(caps.atomic_cap == 0U);
  CHECK(caps.max_mr_size == UINT64_MAX);
  CHECK(caps.vendor_id == 0x8086U);
  CHECK(caps.vendor_part_id == 5522U);
  CHECK_FALSE(caps.max_qp_wr.has_value());
}

TEST_CASE("a limits fault refuses an atomic_cap beyond global, and one with nothing in it",
          "[unit]") {
  auto atomic =
      parse_fault_set({{"faults", {{{"kind", "limits"}, {"atomic_cap", 3}}}}}, kInterposer, "plan");
  REQUIRE_FALSE(atomic.ok());
  CHECK_THAT(atomic.error().message,
             Catch::Contains("/faults/0/atomic_cap") && Catch::Contains("from 0 to 2"));
  auto empty = parse_fault_set({{"faults", {{{"kind", "limits"}}}}}, kInterposer, "plan");
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(empty.error().message, Catch::Contains("max_srq_wr") && Catch::Contains("vendor_id"));
}

TEST_CASE("a limits fault refuses QP types and opcodes a target has none of, with its errno",
          "[unit]") {
  const json fault = {{"kind", "limits"},
                      {"errno", 22},
                      {"refuse_qp_types", {{"names", {"RC", "UC"}}, {"errno", 95}}},
                      {"refuse_operations", {{"names", {"RDMA_WRITE_WITH_IMM"}}}}};
  auto parsed = parse_fault(fault, kInterposer, "plan");
  INFO((parsed.ok() ? std::string() : parsed.error().describe()));
  REQUIRE(parsed.ok());
  const auto& caps = parsed->caps;
  CHECK(caps.qp_types.refuses("RC"));
  CHECK(caps.qp_types.refuses("UC"));
  CHECK_FALSE(caps.qp_types.refuses("UD"));
  CHECK(caps.qp_types.error_number == 95);
  CHECK(caps.operations.refuses("RDMA_WRITE_WITH_IMM"));
  CHECK(caps.operations.error_number == 22);  // the fault's own errno
  // Two plans' refusals add up, each keeping the errno of the one that refuses.
  LimitCaps both;
  both.take_smaller(caps);
  LimitCaps more;
  more.qp_types = Refused{{"UD"}, 95};
  both.take_smaller(more);
  CHECK(both.qp_types.names == std::vector<std::string>{"RC", "UC", "UD"});
  // faultline's own endpoints make RC QPs only: the keys are the interposers'.
  auto own = parse_fault(fault, kDecorator, "f");
  REQUIRE_FALSE(own.ok());
  CHECK_THAT(own.error().message,
             Catch::Contains("refuse_") && Catch::Contains("faultline's own endpoints"));
  // A name the profiles do not use, or no names, is refused naming the ones allowed.
  for (const json& refused :
       {json{{"names", {"SRD"}}}, json{{"names", json::array()}}, json{{"types", {"RC"}}}}) {
    auto bad = parse_fault({{"kind", "limits"}, {"refuse_qp_types", refused}}, kInterposer, "plan");
    CAPTURE(refused.dump());
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Catch::Contains("plan/refuse_qp_types") &&
                                        Catch::Contains("RAW_PACKET") && Catch::Contains("DRIVER"));
  }
}

TEST_CASE("an unknown kind or key is refused, naming it and the ones allowed", "[unit]") {
  auto kind = parse_fault({{"kind", "rewrite_stat"}}, kDecorator, "f");
  REQUIRE_FALSE(kind.ok());
  CHECK_THAT(kind.error().message, Catch::Contains("f/kind") && Catch::Contains("rewrite_stat") &&
                                       Catch::Contains("drop_completion"));
  // Misspelt keys (sied, rnak, opcdoe) must not fault everything everywhere.
  for (const char* key : {"sied", "rnak", "opcdoe", "max_cqes"}) {
    auto fault =
        parse_fault({{"status", "REM_ACCESS_ERR"}, {"nth", 1}, {key, 1}}, kInterposer, "--fault");
    CAPTURE(key);
    REQUIRE_FALSE(fault.ok());
    CHECK_THAT(fault.error().message,
               Catch::Contains(std::string("--fault: ") + key) && Catch::Contains("qp_num"));
  }
  auto plan = parse_fault_set({{"faults", json::array()}, {"sed", 1}}, kInterposer, "p");
  REQUIRE_FALSE(plan.ok());
  CHECK_THAT(plan.error().message, Catch::Contains("sed"));
}

TEST_CASE("corrupt_data without data says it is missing, one with a wrong data names the choices",
          "[unit]") {
  auto missing = parse_fault({{"kind", "corrupt_data"}, {"nth", 1}}, kInterposer, "--fault");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message,
             Catch::Contains("--fault: data") && Catch::Contains("required, missing"));
  auto wrong = parse_fault({{"kind", "corrupt_data"}, {"data", "shred"}, {"nth", 1}}, kInterposer,
                           "--fault");
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(wrong.error().message,
             Catch::Contains("one of scribble, suppress") && !Catch::Contains("missing"));
}

TEST_CASE("a kind or key an applier cannot apply is refused at parse time, saying why", "[unit]") {
  auto delay = parse_fault({{"kind", "delay_completion"}, {"delay_ms", 5}, {"nth", 1}}, kInterposer,
                           "--fault");
  REQUIRE_FALSE(delay.ok());
  CHECK_THAT(delay.error().message,
             Catch::Contains("delay_completion") && Catch::Contains("faultline's own endpoints"));
  CHECK(parse_fault({{"kind", "delay_completion"}, {"delay_ms", 5}, {"nth", 1}}, kDecorator, "f")
            .ok());
  auto observe = parse_fault({{"kind", "observe"}}, kDecorator, "f");
  REQUIRE_FALSE(observe.ok());
  CHECK_THAT(observe.error().message, Catch::Contains("programs under the interposers"));
  auto qp_error = parse_fault(
      {{"kind", "rewrite_status"}, {"status", "WR_FLUSH_ERR"}, {"nth", 1}, {"qp_error", true}},
      kDecorator, "f");
  REQUIRE_FALSE(qp_error.ok());
  CHECK_THAT(qp_error.error().message, Catch::Contains("f/qp_error"));
  auto srq = parse_fault({{"kind", "limits"}, {"max_srq_wr", 8}}, kDecorator, "f");
  REQUIRE_FALSE(srq.ok());
  CHECK_THAT(srq.error().message, Catch::Contains("f/max_srq_wr"));
}

TEST_CASE("segment_count takes fewer, or split into 2 to 64, and inline takes force", "[unit]") {
  auto fewer =
      parse_fault({{"kind", "segment_count"}, {"mode", "fewer"}, {"post", "recv"}, {"nth", 2}},
                  kInterposer, "f");
  REQUIRE(fewer.ok());
  CHECK(fewer->segment_mode == SegmentMode::kFewer);
  CHECK(fewer->side == Side::kRecv);
  auto split = parse_fault(
      {{"kind", "segment_count"}, {"mode", "split"}, {"into", 8}, {"every", 1}}, kDecorator, "f");
  REQUIRE(split.ok());
  CHECK(split->split_into == 8);
  for (const json& bad :
       {json{{"kind", "segment_count"}, {"mode", "split"}, {"nth", 1}},
        json{{"kind", "segment_count"}, {"mode", "split"}, {"into", 1}, {"nth", 1}},
        json{{"kind", "segment_count"}, {"mode", "fewer"}, {"into", 2}, {"nth", 1}},
        json{{"kind", "segment_count"}, {"mode", "fewer"}}}) {
    CAPTURE(bad.dump());
    CHECK_FALSE(parse_fault(bad, kInterposer, "f").ok());
  }
  auto forced = parse_fault({{"kind", "inline"}, {"mode", "force"}}, kInterposer, "f");
  REQUIRE(forced.ok());
  CHECK(forced->inline_mode == InlineMode::kForce);
}

TEST_CASE("rewrite_field takes a field, what it becomes and which messages", "[unit]") {
  auto minus_one = parse_fault({{"kind", "rewrite_field"},
                                {"offset", 8},
                                {"width", 8},
                                {"minus_one", true},
                                {"equals", 3},
                                {"length", 64},
                                {"opcode", "SEND_WITH_IMM"},
                                {"every", 1}},
                               kInterposer, "f");
  REQUIRE(minus_one.ok());
  CHECK(minus_one->field.offset == 8);
  CHECK(minus_one->field.rewritten(3) == 2);
  CHECK(minus_one->field.matches(64, 3));
  CHECK_FALSE(minus_one->field.matches(64, 2));
  CHECK_FALSE(minus_one->field.matches(72, 3));
  CHECK_FALSE(minus_one->field.matches(64, std::nullopt));
  auto value = parse_fault(
      {{"kind", "rewrite_field"}, {"offset", 0}, {"width", 2}, {"value", 7}, {"nth", 1}},
      kDecorator, "f");
  REQUIRE(value.ok());
  CHECK(value->field.rewritten(0xffff) == 7);
  CHECK(value->field.matches(1000, 0));
  for (const auto& [bad, key] : std::vector<std::pair<json, std::string>>{
           {{{"kind", "rewrite_field"}, {"offset", 0}, {"width", 3}, {"value", 1}, {"nth", 1}},
            "f/width"},
           {{{"kind", "rewrite_field"}, {"width", 4}, {"value", 1}, {"nth", 1}}, "f/offset"},
           {{{"kind", "rewrite_field"}, {"offset", 0}, {"width", 4}, {"nth", 1}}, "f/value"},
           {{{"kind", "rewrite_field"},
             {"offset", 0},
             {"width", 4},
             {"value", 1},
             {"minus_one", true},
             {"nth", 1}},
            "f/value"},
           {{{"kind", "rewrite_field"}, {"offset", 0}, {"width", 1}, {"value", 256}, {"nth", 1}},
            "f/value"},
           {{{"kind", "rewrite_field"},
             {"offset", 60},
             {"width", 8},
             {"value", 1},
             {"length", 64},
             {"nth", 1}},
            "f/length"},
           {{{"kind", "rewrite_field"},
             {"offset", 0},
             {"width", 8},
             {"value", 1},
             {"side", "recv"},
             {"nth", 1}},
            "f/side"},
           {{{"kind", "rewrite_field"}, {"offset", 0}, {"width", 8}, {"value", 1}}, "f:"}}) {
    CAPTURE(bad.dump());
    auto parsed = parse_fault(bad, kInterposer, "f");
    REQUIRE_FALSE(parsed.ok());
    CHECK_THAT(parsed.error().message, Catch::Contains(key));
  }
}

TEST_CASE("a field is read and written across the segments it straddles", "[unit]") {
  // 8 bytes at offset 6 of a message in pieces of 4, 4 and 8 bytes: across all three.
  std::array<std::byte, 16> bytes{};
  const uint64_t three = 3;
  std::memcpy(bytes.data() + 6, &three, 8);
  struct Piece {
    std::byte* at;
    size_t length;
  };
  const std::array<Piece, 3> pieces{
      {{bytes.data(), 4}, {bytes.data() + 4, 4}, {bytes.data() + 8, 8}}};
  const auto address = [](const Piece& p) { return p.at; };
  const auto length = [](const Piece& p) { return p.length; };
  const FieldRewrite field{.offset = 6, .width = 8, .minus_one = true};
  CHECK(read_field(field, std::span<const Piece>(pieces), address, length) == uint64_t{3});
  const auto values = rewrite_field(field, std::span<const Piece>(pieces), address, length);
  REQUIRE(values);
  CHECK(*values == std::pair<uint64_t, uint64_t>{3, 2});
  uint64_t now = 0;
  std::memcpy(&now, bytes.data() + 6, 8);
  CHECK(now == 2);
  // Past the end: nothing read, nothing written.
  const FieldRewrite past{.offset = 12, .width = 8, .value = 1};
  CHECK_FALSE(read_field(past, std::span<const Piece>(pieces), address, length));
  CHECK_FALSE(rewrite_field(past, std::span<const Piece>(pieces), address, length));
  // Minus one wraps at the width.
  CHECK(FieldRewrite{.width = 2, .minus_one = true}.rewritten(0) == 0xffff);
}

TEST_CASE("each completion kind has one effect and every limit one row", "[unit]") {
  for (const auto& kind : fault_kinds()) {
    CAPTURE(kind.name);
    const auto& e = kind.effect;
    const int effects =
        e.rewrite_status + e.change_data + e.drop + e.delay + e.duplicate + e.replay;
    const bool post_kind = kind.kind == FaultKind::kFailPost ||
                           kind.kind == FaultKind::kSegmentCount ||
                           kind.kind == FaultKind::kRewriteField;
    CHECK(effects == (kind.firing && !post_kind ? 1 : 0));
    CHECK(kind.appliers != 0);
  }
  const auto decorator = limit_names(kDecorator);
  CHECK(std::find(decorator.begin(), decorator.end(), "max_mtu") != decorator.end());
  CHECK(std::find(decorator.begin(), decorator.end(), "max_srq_wr") == decorator.end());
  const auto interposer = limit_names(kInterposer);
  CHECK(std::find(interposer.begin(), interposer.end(), "atomic_cap") != interposer.end());
  // max_msg_size holds a libfabric program (ep_attr->max_msg_size); the MTUs hold none.
  CHECK(std::find(interposer.begin(), interposer.end(), "max_msg_size") != interposer.end());
  CHECK(std::find(interposer.begin(), interposer.end(), "max_mtu") == interposer.end());
  faultline::transports::DeviceLimits limits;
  limits.max_qp_wr = 16384;
  LimitCaps caps;
  caps.max_qp_wr = 1024;
  caps.max_cqe = 64;
  const auto applied = caps.applied_to(limits);
  CHECK(applied.max_qp_wr == 1024U);
  CHECK(applied.max_cqe == 64U);
  CHECK(limit_value(applied, "max_cqe") == 64U);
  CHECK_FALSE(limit_value(applied, "max_mtu").has_value());
}
