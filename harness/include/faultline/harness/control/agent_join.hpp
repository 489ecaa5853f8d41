#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "faultline/core/status.hpp"
#include "faultline/harness/control/agent.hpp"
#include "faultline/harness/control/channel.hpp"

namespace faultline::harness {

/// The environment variable through which an agent tells its scenario children the
/// coordinator's address (HOST:PORT).
inline constexpr const char* kCoordinatorEnv = "FAULTLINE_COORDINATOR";

/// What the coordinator says to an agent it accepted.
struct Welcome {
  std::string agent_id;
  std::chrono::milliseconds heartbeat{0};
  /// How long the coordinator may be silent before this agent takes it for gone (it sends a
  /// heartbeat at least every `heartbeat`).
  std::chrono::milliseconds silence{0};
};

/// Connects to `options.coordinator` with exponential backoff until `connect_budget` is spent
/// (all of it); the error names the address, the attempts and the last failure.
Result<std::unique_ptr<control::Channel>> connect_with_retries(const AgentOptions& options);

/// What an agent tells the coordinator of its host besides its options: the transport's
/// devices and the kinds of programs it can run. Gathered before joining, so that a slow device
/// listing (seconds under emulation) is not spent inside the coordinator's handshake timeout.
struct HostFacts {
  nlohmann::json devices;
  nlohmann::json programs;
};
HostFacts gather_host_facts(const AgentOptions& options);

/// A channel to the coordinator, authenticated.
struct Joined {
  std::unique_ptr<control::Channel> channel;
  Welcome welcome;
  /// What the agent runs on: its --transport, --provider and --device, the device filled in
  /// with the one that reaches the coordinator when --device was left out.
  transports::Target target;
};

/// Connects, chooses the target (`target_toward`), authenticates, and does both again with backoff
/// while the budget lasts when the coordinator closed the connection before answering (its
/// handshake slots were full); a refusal (a wrong token, no place left) ends it at once.
Result<Joined> join_coordinator(const AgentOptions& options, const HostFacts& facts);

/// Answers the coordinator's challenge with `options.token` and checks its proof; the welcome,
/// or why it failed (a refused token, no answer within `handshake_timeout`).
Result<Welcome> authenticate(control::Channel& channel, const AgentOptions& options,
                             const HostFacts& facts);

}  // namespace faultline::harness
