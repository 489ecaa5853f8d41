#include "faultline/harness/control/auth.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "support/background_process.hpp"

using namespace faultline::harness::control;

TEST_CASE("the answers are HMAC-SHA256 (RFC 4231 test case 2) over the prover and nonce",
          "[unit][control]") {
  CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(answer_challenge("Jefe", "n", Prover::kAgent) ==
        hmac_sha256_hex("Jefe", "faultline-agent:n"));
  CHECK(answer_challenge("Jefe", "n", Prover::kCoordinator) ==
        hmac_sha256_hex("Jefe", "faultline-coordinator:n"));
}

TEST_CASE("only the answer made with the same token, nonce and prover is valid",
          "[unit][control]") {
  const auto nonce = make_nonce();
  CHECK(nonce.size() == 64);
  CHECK(nonce != make_nonce());
  const auto answer = answer_challenge("token", nonce, Prover::kAgent);
  CHECK(answer_is_valid("token", nonce, Prover::kAgent, answer));
  CHECK_FALSE(answer_is_valid("token", nonce, Prover::kCoordinator, answer));  // no reflection
  CHECK_FALSE(answer_is_valid("other", nonce, Prover::kAgent, answer));
  CHECK_FALSE(answer_is_valid("token", make_nonce(), Prover::kAgent, answer));
  CHECK_FALSE(answer_is_valid("token", nonce, Prover::kAgent, answer.substr(1)));
  CHECK_FALSE(answer_is_valid("token", nonce, Prover::kAgent, ""));
}

TEST_CASE("the token comes from the file, else the environment, else it is an error",
          "[unit][control]") {
  faultline::testing::TempDir dir;
  const std::string path = dir.path() + "/token";
  std::ofstream(path) << "from-file\n";
  chmod(path.c_str(), 0600);
  setenv("FAULTLINE_TOKEN", "from-env", 1);
  std::string warning;
  auto from_file = load_token(path, warning);
  REQUIRE(from_file.ok());
  CHECK(from_file.value() == "from-file");
  CHECK(warning.empty());

  auto from_env = load_token("", warning);
  REQUIRE(from_env.ok());
  CHECK(from_env.value() == "from-env");

  unsetenv("FAULTLINE_TOKEN");
  auto none = load_token("", warning);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.error().message, Catch::Contains("--token-file"));
  CHECK_THAT(none.error().message, Catch::Contains("FAULTLINE_TOKEN"));

  auto missing = load_token(dir.path() + "/nosuch", warning);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains("nosuch"));
}

TEST_CASE("a token file readable by others gives a warning", "[unit][control]") {
  faultline::testing::TempDir dir;
  const std::string path = dir.path() + "/token";
  std::ofstream(path) << "secret";
  chmod(path.c_str(), 0644);
  std::string warning;
  auto token = load_token(path, warning);
  REQUIRE(token.ok());
  CHECK_THAT(warning, Catch::Contains("chmod 600"));
  CHECK_THAT(warning, !Catch::Contains("secret"));
}

TEST_CASE("a token file is read only as far as a token goes", "[unit][control]") {
  faultline::testing::TempDir dir;
  const std::string huge = dir.path() + "/disk-image";
  // A sparse gigabyte: read whole, it would take a gigabyte of memory and more.
  std::ofstream(huge).close();
  REQUIRE(truncate(huge.c_str(), 1L << 30) == 0);
  for (const std::string& path : {huge, std::string("/dev/zero")}) {
    std::string warning;
    auto token = load_token(path, warning);
    REQUIRE_FALSE(token.ok());
    CHECK_THAT(token.error().message, Catch::Contains("holds more than 4096 bytes"));
  }
  const std::string longest = dir.path() + "/longest";
  std::ofstream(longest) << std::string(4096, 'k') << "\n";
  std::string warning;
  auto token = load_token(longest, warning);
  REQUIRE(token.ok());
  CHECK(token->size() == 4096);
}
