#include "faultline/harness/control/auth.hpp"

#include "faultline/core/hex.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace faultline::harness::control {

namespace {

std::string random_hex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("RAND_bytes failed: no randomness for a nonce");
  }
  return to_hex(std::as_bytes(std::span(raw.data(), bytes)));
}

// $FAULTLINE_TOKEN's value, taken out of the environment: its bytes are overwritten where they
// are, so neither /proc/PID/environ (which reads the environment as it was at exec) nor a child
// between its fork and its exec shows it, then the variable is removed.
std::string take_token_from_environment() {
  char* value = std::getenv("FAULTLINE_TOKEN");
  if (value == nullptr) return {};
  std::string token(value);
  OPENSSL_cleanse(value, token.size());
  unsetenv("FAULTLINE_TOKEN");
  return token;
}

}  // namespace

std::string make_nonce() { return random_hex(32); }
std::string make_token() { return random_hex(32); }

std::string hmac_sha256_hex(const std::string& key, const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &length);
  return to_hex(std::as_bytes(std::span(digest, length)));
}

std::string answer_challenge(const std::string& token, const std::string& nonce, Prover prover) {
  return hmac_sha256_hex(
      token, (prover == Prover::kAgent ? "faultline-agent:" : "faultline-coordinator:") + nonce);
}

bool answer_is_valid(const std::string& token, const std::string& nonce, Prover prover,
                     const std::string& answer) {
  const std::string expected = answer_challenge(token, nonce, prover);
  return answer.size() == expected.size() &&
         CRYPTO_memcmp(answer.data(), expected.data(), expected.size()) == 0;
}

Result<std::string> load_token(const std::string& token_file, std::string& warning) {
  if (!token_file.empty()) {
    // Read a little more than any token: a file that is not one (a disk image, /dev/zero)
    // costs no memory.
    const int fd = ::open(token_file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return Error{ErrorCode::kInvalidArgument,
                   "cannot read the token file '" + token_file + "': " + std::strerror(errno)};
    }
    struct stat info {};
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
        (info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
      warning = "the token file '" + token_file + "' is readable by group or others; chmod 600 it";
    }
    std::string token(kLongestToken + 3, '\0');  // a token, its line end, and one byte more
    size_t got = 0;
    while (got < token.size()) {
      const ssize_t n = ::read(fd, token.data() + got, token.size() - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    ::close(fd);
    token.resize(got);
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
    if (token.size() > kLongestToken) {
      return Error{ErrorCode::kInvalidArgument,
                   "the token file '" + token_file + "' holds more than " +
                       std::to_string(kLongestToken) + " bytes: is it a token file?"};
    }
    if (token.empty()) {
      return Error{ErrorCode::kInvalidArgument, "the token file '" + token_file + "' is empty"};
    }
    return token;
  }
  if (std::string token = take_token_from_environment(); !token.empty()) return token;
  return Error{ErrorCode::kInvalidArgument,
               "no token: give --token-file FILE or set FAULTLINE_TOKEN (the same on the "
               "coordinator and every agent)"};
}

}  // namespace faultline::harness::control
