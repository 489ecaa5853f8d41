#include "faultline/harness/control/frame.hpp"

#include <catch2/catch.hpp>

using faultline::ErrorCode;
using faultline::harness::control::encode_frame;
using faultline::harness::control::FrameDecoder;
using faultline::harness::control::kMaxFrameSize;

namespace {
std::vector<std::byte> raw_frame(uint32_t length, const std::string& body) {
  std::vector<std::byte> bytes = {std::byte(length >> 24), std::byte(length >> 16),
                                  std::byte(length >> 8), std::byte(length)};
  for (char c : body) bytes.push_back(std::byte(c));
  return bytes;
}
}  // namespace

TEST_CASE("frames survive any split of the byte stream", "[unit][control]") {
  const nlohmann::json first = {{"type", "heartbeat"}, {"seq", 1}};
  const nlohmann::json second = {{"type", "step"}, {"name", std::string(300, 'x')}};
  auto bytes = encode_frame(first);
  const auto more = encode_frame(second);
  bytes.insert(bytes.end(), more.begin(), more.end());
  for (size_t chunk : {size_t{1}, size_t{3}, size_t{7}, bytes.size()}) {
    CAPTURE(chunk);
    FrameDecoder decoder;
    std::vector<nlohmann::json> decoded;
    for (size_t offset = 0; offset < bytes.size(); offset += chunk) {
      decoder.feed(bytes.data() + offset, std::min(chunk, bytes.size() - offset));
      while (true) {
        auto next = decoder.next();
        REQUIRE(next.ok());
        if (!next.value()) break;
        decoded.push_back(*next.value());
      }
    }
    REQUIRE(decoded.size() == 2);
    CHECK(decoded[0] == first);
    CHECK(decoded[1] == second);
    CHECK(decoder.pending() == 0);
  }
}

TEST_CASE("a truncated frame waits for more and stays pending", "[unit][control]") {
  const auto bytes = encode_frame({{"type", "heartbeat"}});
  FrameDecoder decoder;
  decoder.feed(bytes.data(), bytes.size() - 1);
  auto next = decoder.next();
  REQUIRE(next.ok());
  CHECK_FALSE(next.value().has_value());
  CHECK(decoder.pending() == bytes.size() - 1);
}

TEST_CASE("an oversized length is refused before its body arrives", "[unit][control]") {
  FrameDecoder decoder;
  const auto bytes = raw_frame(kMaxFrameSize + 1, "");
  decoder.feed(bytes.data(), bytes.size());
  auto next = decoder.next();
  REQUIRE_FALSE(next.ok());
  CHECK(next.error().code == ErrorCode::kProtocolViolation);
  CHECK_THAT(next.error().message, Catch::Contains("exceeds the maximum 1048576"));
}

TEST_CASE("a frame that is not JSON, or JSON that is not an object, is a violation",
          "[unit][control]") {
  for (const std::string body : {"{not json", "[1,2,3]", "42", "\"text\""}) {
    CAPTURE(body);
    FrameDecoder decoder;
    const auto bytes = raw_frame(static_cast<uint32_t>(body.size()), body);
    decoder.feed(bytes.data(), bytes.size());
    auto next = decoder.next();
    REQUIRE_FALSE(next.ok());
    CHECK(next.error().code == ErrorCode::kProtocolViolation);
  }
}

TEST_CASE("a frame nested deeper than 64 levels is refused before it is parsed",
          "[unit][control]") {
  // 400000 levels fit in one frame; copying or dumping such a document would overflow the
  // stack of the thread that does it.
  const std::string deep = std::string(400000, '[') + std::string(400000, ']');
  FrameDecoder decoder;
  const auto bytes = raw_frame(static_cast<uint32_t>(deep.size()), deep);
  decoder.feed(bytes.data(), bytes.size());
  auto next = decoder.next();
  REQUIRE_FALSE(next.ok());
  CHECK(next.error().code == ErrorCode::kProtocolViolation);
  CHECK_THAT(next.error().message, Catch::Contains("nests 400000 levels deep; at most 64"));

  std::string nested_64 = R"({"type":"heartbeat","text":"[[[[{{{{","deep":)";
  for (int i = 0; i < 63; ++i) nested_64 += "[";
  nested_64 += std::string(63, ']') + "}";
  FrameDecoder accepting;
  const auto fine = raw_frame(static_cast<uint32_t>(nested_64.size()), nested_64);
  accepting.feed(fine.data(), fine.size());
  auto accepted = accepting.next();
  REQUIRE(accepted.ok());
  CHECK(accepted.value().has_value());
}
