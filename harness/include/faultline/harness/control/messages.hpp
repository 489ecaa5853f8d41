#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string_view>

#include "faultline/core/status.hpp"

namespace faultline::harness::control {

/// The control protocol version carried in the challenge and the auth answer. Version 2: the
/// coordinator proves the token too (the auth carries the agent's nonce, the welcome the answer).
inline constexpr int kProtocolVersion = 2;

/// Every message type and who sends it:
///   coordinator -> agent: challenge, welcome, reject, run_scenario, abort_scenario, peer_info,
///                         barrier_release, shutdown
///   agent -> coordinator: auth, heartbeat, endpoint_info, barrier, step, scenario_result
/// (scenario messages pass through the agent to and from its scenario child unchanged).
/// Every message has "type" (string), "seq" (unsigned) and "session" (string).

/// Checks `message` against the schema of its type, and that its type is one of `allowed`
/// (the messages valid in the receiver's current state). kProtocolViolation names the type
/// and the field that is missing or of the wrong kind.
Status validate_message(const nlohmann::json& message,
                        std::initializer_list<std::string_view> allowed);

}  // namespace faultline::harness::control
