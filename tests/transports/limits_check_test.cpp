#include <catch2/catch.hpp>

#include "faultline/transports/limits_check.hpp"

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
