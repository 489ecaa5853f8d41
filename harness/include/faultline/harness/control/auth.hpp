#pragma once

#include <string>

#include "faultline/transports/status.hpp"

namespace faultline::harness::control {

/// 32 random bytes from OpenSSL's RAND_bytes, as 64 hex digits. A fresh one per connection.
std::string make_nonce();

/// HMAC-SHA256(token, nonce) as 64 hex digits: what an agent answers a challenge with.
std::string answer_challenge(const std::string& token, const std::string& nonce);

/// Constant-time check of an agent's answer.
bool answer_is_valid(const std::string& token, const std::string& nonce, const std::string& answer);

/// A fresh random token for a run that starts its own agents.
std::string make_token();

/// The shared token: the contents of `token_file` (trailing newline removed) when given, else
/// $FAULTLINE_TOKEN. Neither is a configuration error naming both. A token file readable by
/// group or others is accepted with a warning in `warning`.
transports::Result<std::string> load_token(const std::string& token_file, std::string& warning);

}  // namespace faultline::harness::control
