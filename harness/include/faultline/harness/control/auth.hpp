#pragma once

#include <string>

#include "faultline/core/status.hpp"

namespace faultline::harness::control {

/// 32 random bytes from OpenSSL's RAND_bytes, as 64 hex digits. A fresh one per connection.
std::string make_nonce();

/// HMAC-SHA256(key, data) as 64 hex digits.
std::string hmac_sha256_hex(const std::string& key, const std::string& data);

/// Who proves that it knows the token. Each side proves it on the other side's nonce: the agent
/// answers the coordinator's challenge, the coordinator answers the nonce in the agent's auth.
enum class Prover { kAgent, kCoordinator };

/// HMAC-SHA256(token, "faultline-agent:" or "faultline-coordinator:" + nonce) as hex. The
/// prover's name in the input means one side's answer never serves as the other side's (a
/// rogue coordinator cannot have an agent answer the nonce of another agent's auth for it).
std::string answer_challenge(const std::string& token, const std::string& nonce, Prover prover);

/// The token a scenario's `control.join` step joins with, to be refused: a coordinator that
/// meets it while such a step runs knows the refusal for the scenario's own and does not log
/// it as an intruder's (any other wrong token, or this one at any other time, is logged).
inline constexpr const char* kScenarioWrongToken = "not-the-run-token";

/// Constant-time check of an answer.
bool answer_is_valid(const std::string& token, const std::string& nonce, Prover prover,
                     const std::string& answer);

/// A fresh random token for a run that starts its own agents.
std::string make_token();

/// The most bytes a token file may hold.
inline constexpr size_t kLongestToken = 4096;

/// The shared token: the contents of `token_file` (trailing newline removed; at most
/// kLongestToken bytes, only that much read) when given, else
/// $FAULTLINE_TOKEN, which is then wiped from the process's memory and environment (children and
/// /proc/PID/environ never show it). Neither is a configuration error naming both. The file is
/// held to check_token_file first.
Result<std::string> load_token(const std::string& token_file);

/// The one rule every command holds a token file to (the same words everywhere): it exists and
/// can be read, is no directory, and neither its group nor others can read it (a pipe, such as
/// a parent's /proc/self/fd/N, is fine).
Status check_token_file(const std::string& token_file);

}  // namespace faultline::harness::control
