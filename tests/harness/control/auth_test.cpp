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
  auto from_file = load_token(path);
  REQUIRE(from_file.ok());
  CHECK(from_file.value() == "from-file");

  auto from_env = load_token("");
  REQUIRE(from_env.ok());
  CHECK(from_env.value() == "from-env");

  unsetenv("FAULTLINE_TOKEN");
  auto none = load_token("");
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.error().message, Catch::Contains("--token-file"));
  CHECK_THAT(none.error().message, Catch::Contains("FAULTLINE_TOKEN"));

  auto missing = load_token(dir.path() + "/nosuch");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains("nosuch"));
}

TEST_CASE("a token file its group or others can read, or a directory, is refused",
          "[unit][control]") {
  faultline::testing::TempDir dir;
  const std::string path = dir.path() + "/token";
  std::ofstream(path) << "secret";
  for (const mode_t mode : {0644, 0640, 0604}) {
    chmod(path.c_str(), mode);
    auto token = load_token(path);
    REQUIRE_FALSE(token.ok());
    CHECK_THAT(token.error().describe_with_hint(),
               Catch::Contains("--token-file " + path + ": its group or others can read it") &&
                   Catch::Contains("chmod 600 " + path) && !Catch::Contains("secret"));
  }
  auto directory = load_token(dir.path());
  REQUIRE_FALSE(directory.ok());
  CHECK(directory.error().message == "--token-file " + dir.path() +
                                         ": a directory, not a file "
                                         "with the token");
  CHECK(check_token_file(dir.path()).error().message == directory.error().message);
}

TEST_CASE("a token file is read only as far as a token goes", "[unit][control]") {
  faultline::testing::TempDir dir;
  const std::string huge = dir.path() + "/disk-image";
  // A sparse gigabyte: read whole, it would take a gigabyte of memory and more.
  std::ofstream(huge).close();
  REQUIRE(truncate(huge.c_str(), 1L << 30) == 0);
  chmod(huge.c_str(), 0600);
  for (const std::string& path : {huge, std::string("/dev/zero")}) {
    auto token = load_token(path);
    REQUIRE_FALSE(token.ok());
    CHECK_THAT(token.error().message, Catch::Contains("holds more than 4096 bytes"));
  }
  const std::string longest = dir.path() + "/longest";
  std::ofstream(longest) << std::string(4096, 'k') << "\n";
  chmod(longest.c_str(), 0600);
  auto token = load_token(longest);
  REQUIRE(token.ok());
  CHECK(token->size() == 4096);
}
