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

Status check_token_file(const std::string& token_file) {
  struct stat info {};
  if (::stat(token_file.c_str(), &info) != 0) {
    return Error{ErrorCode::kInvalidArgument,
                 "--token-file " + token_file + ": cannot read it: " + std::strerror(errno)};
  }
  if (S_ISDIR(info.st_mode)) {
    return Error{ErrorCode::kInvalidArgument,
                 "--token-file " + token_file + ": a directory, not a file with the token"};
  }
  // A pipe (a parent's /proc/self/fd/N) has no readers but its own; a file others can read
  // hands them the run.
  if (S_ISREG(info.st_mode) && (info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", info.st_mode & 07777);
    return Error{
        ErrorCode::kInvalidArgument,
        "--token-file " + token_file + ": its group or others can read it (mode " + mode + ")"}
        .with_hint("chmod 600 " + token_file + " (or make it under umask 077)");
  }
  if (::access(token_file.c_str(), R_OK) != 0) {
    return Error{ErrorCode::kInvalidArgument,
                 "--token-file " + token_file + ": cannot read it: " + std::strerror(errno)};
  }
  return {};
}

Result<std::string> load_token(const std::string& token_file) {
  if (!token_file.empty()) {
    FAULTLINE_RETURN_IF_ERROR(check_token_file(token_file));
    // Read a little more than any token: a file that is not one (a disk image, /dev/zero)
    // costs no memory.
    const int fd = ::open(token_file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return Error{ErrorCode::kInvalidArgument,
                   "--token-file " + token_file + ": cannot read it: " + std::strerror(errno)};
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
                   "--token-file " + token_file + ": holds more than " +
                       std::to_string(kLongestToken) + " bytes: is it a token file?"};
    }
    if (token.empty()) {
      return Error{ErrorCode::kInvalidArgument, "--token-file " + token_file + ": empty"};
    }
    return token;
  }
  if (std::string token = take_token_from_environment(); !token.empty()) return token;
  return Error{ErrorCode::kInvalidArgument,
               "no token: give --token-file FILE or set FAULTLINE_TOKEN (the same on the "
               "coordinator and every agent)"};
}

}  // namespace faultline::harness::control
