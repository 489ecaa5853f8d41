// How an agent joins its coordinator: the connection (retried within a budget) and the
// challenge-response handshake. Also used by the control.join step, which joins on purpose
// with a wrong token or address to show what a misconfigured agent is told.
#include "faultline/harness/control/agent_join.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <thread>

#include "faultline/harness/base/net_address.hpp"
#include "faultline/harness/control/auth.hpp"
#include "faultline/harness/control/messages.hpp"
#include "faultline/transports/json.hpp"
#include "role_log.hpp"

namespace faultline::harness {

namespace {

using namespace std::chrono_literals;

nlohmann::json hello(const AgentOptions& options, const HostFacts& facts) {
  return {{"host", host_name()},
          {"name", options.name.empty() ? agent_name_from_host(host_name()) : options.name},
          {"rail", options.rail},
          {"switch", options.switch_label},
          {"pid", static_cast<uint64_t>(getpid())},
          {"target",
           {{"transport", options.target.transport},
            {"provider", options.target.provider},
            {"device", options.target.device}}},
          {"devices", facts.devices},
          {"programs", facts.programs}};
}

}  // namespace

// Connects with exponential backoff until the budget is spent (the whole of it).
Result<std::unique_ptr<control::Channel>> connect_with_retries(const AgentOptions& options) {
  auto address = parse_host_port(options.coordinator);
  if (!address.ok()) return std::move(address).take_error();
  const auto start = std::chrono::steady_clock::now();
  auto backoff = 100ms;
  int attempts = 0;
  for (;;) {
    ++attempts;
    auto fd = connect_tcp(address.value());
    if (fd.ok()) {
      return std::make_unique<control::Channel>(fd.value(), "coordinator " + address->text());
    }
    const auto spent = std::chrono::steady_clock::now() - start;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(options.connect_budget - spent);
    if (left <= 0ms) {
      const auto seconds = std::chrono::duration<double>(spent).count();
      Error error = std::move(fd).take_error();
      // A name that never resolved is the user's to fix, not the network's: exit 2.
      if (error.code == ErrorCode::kNotFound) {
        return Error{ErrorCode::kInvalidArgument,
                     "cannot resolve the coordinator's host in --coordinator " + address->text() +
                         " (" + std::to_string(attempts) + " attempts over " +
                         std::to_string(seconds).substr(0, 4) + " s): " + error.message}
            .with_hint(
                "check the name for a typo, and /etc/hosts or DNS on this host; an "
                "address (10.0.0.1:7400) needs no lookup");
      }
      error.message = "could not reach the coordinator at " + address->text() + " after " +
                      std::to_string(attempts) + " attempts over " +
                      std::to_string(seconds).substr(0, 4) +
                      " s; last attempt: " + error.describe();
      error.call.clear();
      return std::move(error).with_hint(
          "is the coordinator running and listening on that address "
          "(faultline coordinator --listen)? is a firewall in the way?");
    }
    // The last attempt is made as the budget ends, not a backoff early.
    std::this_thread::sleep_for(std::min(backoff, left));
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, 2s);
  }
}

HostFacts gather_host_facts(const AgentOptions& options) {
  HostFacts facts{nlohmann::json::array(), nlohmann::json::array()};
  if (options.host) facts.devices = options.host->devices(options.target.transport);
  if (options.programs) facts.programs = options.programs->kinds();
  return facts;
}

Result<Joined> join_coordinator(const AgentOptions& options, const HostFacts& facts) {
  const auto deadline = std::chrono::steady_clock::now() + options.connect_budget;
  auto backoff = 100ms;
  for (int attempt = 1;; ++attempt) {
    AgentOptions left = options;
    left.connect_budget =
        std::max<std::chrono::milliseconds>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                deadline - std::chrono::steady_clock::now()),
                                            0ms);
    auto channel = connect_with_retries(left);
    if (!channel.ok()) return std::move(channel).take_error();
    std::string why;
    if (options.host)
      left.target =
          options.host->target_toward(options.target, local_address(channel.value()->fd()), why);
    if (!why.empty() && attempt == 1) agent_log("using " + why);
    auto welcome = authenticate(*channel.value(), left, facts);
    if (welcome.ok())
      return Joined{std::move(channel).value(), std::move(welcome).value(), left.target};
    // Closed before a word: the coordinator's handshake slots were full. Anything else
    // (a refusal, a coordinator that does not prove the token, silence) is its answer.
    const bool closed_unanswered = welcome.error().code == ErrorCode::kIoError;
    if (!closed_unanswered || std::chrono::steady_clock::now() + backoff >= deadline) {
      Error error = std::move(welcome).take_error();
      if (attempt > 1) error.message += " (handshake attempt " + std::to_string(attempt) + ")";
      return error;
    }
    agent_log("the " + channel.value()->peer_name() +
              " closed the connection before the handshake; trying again");
    std::this_thread::sleep_for(backoff);
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, 2s);
  }
}

// Answers the challenge; the welcome (this agent's id, the heartbeat interval), or the reason
// it failed.
Result<Welcome> authenticate(control::Channel& channel, const AgentOptions& options,
                             const HostFacts& facts) {
  auto challenge = channel.receive(options.handshake_timeout);
  if (!challenge.ok()) {
    Error error = std::move(challenge).take_error();
    if (error.code != ErrorCode::kTimeout) return error;
    return std::move(error).with_hint(
        "the address accepted the connection but sent no challenge: is another service "
        "listening there, or is the coordinator stuck?");
  }
  FAULTLINE_RETURN_IF_ERROR(control::validate_message(challenge.value(), {"challenge"}));
  if (challenge->at("version") != control::kProtocolVersion) {
    return Error{ErrorCode::kProtocolViolation, "the coordinator speaks control protocol version " +
                                                    challenge->at("version").dump() +
                                                    ", this agent " +
                                                    std::to_string(control::kProtocolVersion)};
  }
  const std::string own_nonce = control::make_nonce();
  FAULTLINE_RETURN_IF_ERROR(channel.send_message(
      "auth", {{"answer", control::answer_challenge(options.token, challenge->at("nonce"),
                                                    control::Prover::kAgent)},
               {"nonce", own_nonce},
               {"version", control::kProtocolVersion},
               {"hello", hello(options, facts)}}));
  auto answer = channel.receive(options.handshake_timeout);
  if (!answer.ok()) return std::move(answer).take_error();
  FAULTLINE_RETURN_IF_ERROR(control::validate_message(answer.value(), {"welcome", "reject"}));
  if (answer->at("type") == "reject") {
    const std::string reason = answer->at("reason");
    Error refused{ErrorCode::kInvalidArgument,
                  "the " + channel.peer_name() + " refused this agent: " + reason};
    if (reason.find("token") != std::string::npos) {
      return std::move(refused).with_hint(
          "the agent and the coordinator must share the same token "
          "(--token-file or FAULTLINE_TOKEN)");
    }
    return std::move(refused).with_hint(
        "the coordinator expects fewer agents (--agents); is another agent already using it?");
  }
  if (!control::answer_is_valid(options.token, own_nonce, control::Prover::kCoordinator,
                                answer->at("answer"))) {
    return Error{ErrorCode::kInvalidArgument,
                 "the " + channel.peer_name() +
                     " welcomed this agent but did not prove it knows the token; not trusting it"}
        .with_hint(
            "is something else listening on the coordinator's address, or does the "
            "coordinator have another token?");
  }
  channel.set_session(answer->at("session"));
  const std::string agent_id = answer->at("agent_id");
  agent_log("connected to " + channel.peer_name() + " as " + agent_id);
  const std::chrono::milliseconds heartbeat(answer->at("heartbeat_ms").get<uint64_t>());
  const auto silence_ms = answer->value("silence_ms", nlohmann::json(nullptr));
  const std::chrono::milliseconds silence =
      silence_ms.is_number_unsigned() ? std::chrono::milliseconds(silence_ms.get<uint64_t>())
                                      : 5 * heartbeat;
  return Welcome{agent_id, heartbeat, std::max(silence, 2 * heartbeat)};
}

}  // namespace faultline::harness
