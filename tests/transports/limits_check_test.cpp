#include <catch2/catch.hpp>

#include "faultline/transports/limits_check.hpp"

using namespace faultline;
using namespace faultline::transports;

namespace {
DeviceLimits connectx_like() {
  DeviceLimits limits;
  limits.max_qp_wr = 65535;
  limits.max_recv_wr = 65535;
  limits.max_cqe = 4194303;
  limits.max_send_sge = 30;
  limits.max_recv_sge = 30;
  limits.max_inline_data = 256;
  return limits;
}
}  // namespace

TEST_CASE("The Megatron/DeepEP send depth is refused naming the formula", "[unit]") {
  // send_depth = 3 * tokens + 1 with tokens = 65536 (Megatron-LM #3999)
  EndpointConfig config;
  config.send_depth = 3 * 65536 + 1;
  config.derivations["send_depth"] = "3 x max_tokens_per_rank 65536 + 1";
  Status status = check_endpoint_config(config, connectx_like());
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().code == ErrorCode::kLimitExceeded);
  CHECK(status.error().message ==
        "send_depth 196609 (= 3 x max_tokens_per_rank 65536 + 1) exceeds device max_qp_wr 65535");
  CHECK_FALSE(status.error().hint.empty());
}

TEST_CASE("Every field above its limit is named, in order", "[unit]") {
  EndpointConfig config;
  config.recv_depth = 70000;
  config.cq_depth = 5000000;
  config.max_send_sge = 31;
  config.max_recv_sge = 32;
  config.max_inline = 257;
  auto violations = find_limit_violations(config, connectx_like());
  REQUIRE(violations.size() == 5);
  CHECK(violations[0].describe() == "recv_depth 70000 exceeds device max_recv_wr 65535");
  CHECK(violations[1].describe() == "cq_depth 5000000 exceeds device max_cqe 4194303");
  CHECK(violations[2].describe() == "max_send_sge 31 exceeds device max_send_sge 30");
  CHECK(violations[3].describe() == "max_recv_sge 32 exceeds device max_recv_sge 30");
  CHECK(violations[4].describe() == "max_inline 257 exceeds device max_inline_data 256");
}

TEST_CASE("A config at the limits passes, and an unadvertised CQ limit is not checked", "[unit]") {
  EndpointConfig config;
  config.send_depth = 65535;
  config.recv_depth = 65535;
  config.max_send_sge = 30;
  config.max_inline = 256;
  CHECK(check_endpoint_config(config, connectx_like()).ok());
  DeviceLimits no_cq_limit = connectx_like();
  no_cq_limit.max_cqe.reset();
  config.cq_depth = 100000000;
  CHECK(check_endpoint_config(config, no_cq_limit).ok());
}

namespace {
// A queue granted 4 send and 2 receive segments, 64 inline bytes, on a device reading 2.
PostLimits granted_queue() {
  return {.max_send_sge = 4,
          .max_recv_sge = 2,
          .max_sge_rd = 2,
          .max_segments = 32,
          .max_inline = 64,
          .asked_inline = 64,
          .driver_inline = 220,
          .device_inline = 256,
          .max_msg_size = 1U << 20,
          .immediate_data = true};
}

std::string refusal(const Status& status) {
  return status.ok() ? "accepted" : status.error().message;
}
}  // namespace

TEST_CASE("Post checks name the limit a work request breaks", "[unit]") {
  std::vector<std::byte> memory(4096);
  std::vector<Segment> three(3, Segment{memory.data(), 8, nullptr});
  WorkRequest send{.op = Opcode::kSend, .segments = three};
  CHECK(check_send(send, granted_queue()).ok());

  // An RDMA read of 3 segments fits max_send_sge 4 but not the device's max_sge_rd 2.
  WorkRequest read{.op = Opcode::kRdmaRead, .segments = three};
  CHECK(refusal(check_send(read, granted_queue())) ==
        "RDMA_READ with 3 segments exceeds max_sge_rd 2");

  std::vector<Segment> one(1, Segment{memory.data(), 100, nullptr});
  WorkRequest inline_send{.op = Opcode::kSend, .segments = one, .inline_data = true};
  CHECK(refusal(check_send(inline_send, granted_queue())) ==
        "inline payload of 100 bytes exceeds the granted max_inline 64 (the endpoint asked for "
        "64, the driver reported 220, device max_inline_data 256)");

  WorkRequest no_imm{.op = Opcode::kSendWithImm, .segments = one};
  CHECK(refusal(check_send(no_imm, granted_queue())) == "SEND_WITH_IMM without immediate data");

  std::vector<Segment> huge(1, Segment{memory.data(), (1U << 20) + 1, nullptr});
  WorkRequest write{.op = Opcode::kRdmaWrite, .segments = huge};
  CHECK(refusal(check_send(write, granted_queue())) ==
        "RDMA_WRITE of 1048577 bytes exceeds device max_msg_size 1048576");

  CHECK(refusal(check_recv({.segments = three}, granted_queue())) ==
        "RECV with 3 segments exceeds max_recv_sge 2");
  PostLimits small_arrays = granted_queue();
  small_arrays.max_segments = 2;
  CHECK(refusal(check_send(send, small_arrays)) ==
        "SEND with 3 segments exceeds the 2 segments one work request of this endpoint holds");
}
