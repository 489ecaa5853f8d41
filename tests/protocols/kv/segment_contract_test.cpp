#include "faultline/protocols/kv/segment_contract.hpp"

#include <catch2/catch.hpp>
#include <vector>

using namespace faultline::protocols::kv;

TEST_CASE("the segment table is the StepMesh contract", "[unit]") {
  CHECK(contract_of(MessageType::kPushRequest).segment_count == 3);
  CHECK(contract_of(MessageType::kPullRequest).segment_count == 2);
  CHECK(contract_of(MessageType::kPullResponse).segment_count == 3);
  CHECK(contract_of(MessageType::kPushResponse).segment_count == 0);
  CHECK(contract_of(MessageType::kPushRequest).segments[2] == "lens");
  CHECK(message_type_from_string("PullResponse") == MessageType::kPullResponse);
  CHECK_FALSE(message_type_from_string("Push").has_value());
}

TEST_CASE("a well-formed announce passes for every message type", "[unit]") {
  const std::vector<uint64_t> push = {8 * 4, 4096, 4 * 4};
  const std::vector<uint64_t> pull = {8 * 4, 0};
  CHECK_FALSE(check_announce(MessageType::kPushRequest, push, "server"));
  CHECK_FALSE(check_announce(MessageType::kPullRequest, pull, "server"));
  CHECK_FALSE(check_announce(MessageType::kPullResponse, push, "worker"));
  CHECK_FALSE(check_announce(MessageType::kPushResponse, {}, "worker"));
}

TEST_CASE("a PushRequest with 1 or 2 segments is a violation naming 3 and the count", "[unit]") {
  for (const std::vector<uint64_t>& lengths :
       {std::vector<uint64_t>{32}, std::vector<uint64_t>{32, 4096}}) {
    auto violation = check_announce(MessageType::kPushRequest, lengths, "server");
    REQUIRE(violation);
    CHECK(violation->message == "PushRequest");
    CHECK(violation->expected == 3);
    CHECK(violation->actual == lengths.size());
    CHECK(violation->detected_by == "server");
    CHECK_THAT(violation->describe(),
               Catch::StartsWith("PushRequest: segment count expected 3, actual " +
                                 std::to_string(lengths.size()) + " (detected by server)"));
  }
}

TEST_CASE("segment lengths are checked against the table", "[unit]") {
  // lens must be 4 bytes per key
  auto lens = check_announce(MessageType::kPullResponse, std::vector<uint64_t>{32, 64, 12}, "w");
  REQUIRE(lens);
  CHECK(lens->field == "lens length");
  CHECK(lens->expected == 16);
  CHECK(lens->actual == 12);
  // keys are whole 8-byte keys, at least one
  CHECK(check_announce(MessageType::kPushRequest, std::vector<uint64_t>{0, 0, 0}, "s"));
  CHECK(check_announce(MessageType::kPushRequest, std::vector<uint64_t>{9, 4, 4}, "s"));
  // a PullRequest carries no values
  auto vals = check_announce(MessageType::kPullRequest, std::vector<uint64_t>{8, 4}, "s");
  REQUIRE(vals);
  CHECK(vals->field == "vals length");
  // a PushResponse carries nothing
  auto response = check_announce(MessageType::kPushResponse, std::vector<uint64_t>{8}, "w");
  REQUIRE(response);
  CHECK(response->expected == 0);
}
