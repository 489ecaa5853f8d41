#include <catch2/catch.hpp>

#include <cerrno>

#include "faultline/core/status.hpp"

using namespace faultline;

TEST_CASE("Error text names the call, errno and its text, location, codes and cause", "[unit]") {
  Error error =
      errno_error("ibv_create_qp", ENOMEM, "send_depth 196609 exceeds device max_qp_wr 65535");
  error.where = {"verbs", "", "rxe0", 1U, 0x1a2bU};
  error.hint = "lower send_depth";
  const std::string text = error.describe();
  CHECK_THAT(text, Catch::StartsWith("ibv_create_qp failed: Cannot allocate memory (errno 12)"));
  CHECK_THAT(text, !Catch::Contains(" native "));  // errno is said once, not as a native code
  CHECK_THAT(text, Catch::Contains("device rxe0 port 1 qp 0x1a2b"));
  CHECK_THAT(text, Catch::Contains("[native_error]"));
  CHECK_THAT(text, Catch::EndsWith("send_depth 196609 exceeds device max_qp_wr 65535"));
  CHECK_THAT(text, !Catch::Contains("lower send_depth"));
  CHECK_THAT(error.describe_with_hint(), Catch::EndsWith("\n  hint: lower send_depth"));
}

TEST_CASE("Error without a native call starts with its generic class", "[unit]") {
  Error error{ErrorCode::kNotFound, "unknown device 'nosuch'; devices present: lo, shm"};
  CHECK(error.describe() == "not_found: unknown device 'nosuch'; devices present: lo, shm");
}

TEST_CASE("Result carries a value or an error, Status converts from either", "[unit]") {
  Result<int> good = 7;
  REQUIRE(good.ok());
  CHECK(good.value() == 7);
  CHECK(good.status().ok());
  Result<int> bad = Error{ErrorCode::kTimeout, "no completion"};
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == ErrorCode::kTimeout);
  CHECK_FALSE(bad.status().ok());
  auto returns_early = []() -> Status {
    FAULTLINE_RETURN_IF_ERROR(Status{Error{ErrorCode::kIoError, "disk"}});
    return Error{ErrorCode::kInternal, "not reached"};
  };
  CHECK(returns_early().error().code == ErrorCode::kIoError);
}

TEST_CASE("A Result made from an ok Status is an internal error, not undefined behaviour",
          "[unit]") {
  Result<int> from_ok = Status{};
  REQUIRE_FALSE(from_ok.ok());
  CHECK(from_ok.error().code == ErrorCode::kInternal);
  CHECK_THAT(from_ok.error().message, Catch::Contains("ok Status"));
}

TEST_CASE("Each error code has one spelling, the one scenario files use", "[unit]") {
  CHECK(std::string(to_string(ErrorCode::kInvalidArgument)) == "invalid_argument");
  CHECK(std::string(to_string(ErrorCode::kLimitExceeded)) == "limit_exceeded");
  CHECK(std::string(to_string(ErrorCode::kIoError)) == "io_error");
}
