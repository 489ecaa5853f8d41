// The coordinator's acceptor: listening, accepting (at most 64 handshakes under way),
// the mutual handshake, and one reader per connection that validates every message and hands
// it to the decision thread; sending to an agent.
#include "faultline/harness/control/coordinator.hpp"
#include "faultline/harness/control/peer_record_checks.hpp"

#include <algorithm>
#include <utility>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <iostream>

#include "faultline/harness/base/net_address.hpp"
#include "faultline/harness/control/auth.hpp"
#include "faultline/harness/control/messages.hpp"
#include "role_log.hpp"

namespace faultline::harness {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Connections between accept and the end of their handshake (each holds a thread for up to
// the handshake timeout); more are closed at once, so a flood cannot exhaust threads.
constexpr int kMaxHandshakesUnderWay = 64;

std::string peer_address(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "unknown peer";
  char host[64] = {};
  uint16_t port = 0;
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
    port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
    port = ntohs(v6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

}  // namespace

Coordinator::Coordinator(CoordinatorOptions options) : options_(std::move(options)) {}

Coordinator::~Coordinator() {
  stopping_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  // Shut the channels down under the lock, join without it: a connection thread takes the
  // lock as it ends.
  std::list<Connection> connections;
  {
    std::lock_guard lock(connections_mutex_);
    for (auto& connection : connections_) {
      if (connection.channel) connection.channel->shutdown();
    }
  }
  for (auto& connection : connections_) {
    if (connection.thread.joinable()) connection.thread.join();
  }
}

Status Coordinator::listen() {
  auto address = parse_host_port(options_.listen);
  if (!address.ok()) return std::move(address).take_error();
  boost::asio::io_context io;
  boost::system::error_code error;
  const auto ip = boost::asio::ip::make_address(address->host, error);
  if (error) {
    return Error{ErrorCode::kInvalidArgument,
                 "--listen needs an IP address, not '" + address->host + "': " + error.message()};
  }
  boost::asio::ip::tcp::acceptor acceptor(io);
  const boost::asio::ip::tcp::endpoint endpoint(ip, address->port);
  acceptor.open(endpoint.protocol(), error);
  if (!error) acceptor.set_option(boost::asio::ip::tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor.bind(endpoint, error);
  if (!error) acceptor.listen(128, error);
  if (error) {
    Error failed = errno_error("bind", error.value(), "listening on " + address->text());
    failed.code = ErrorCode::kIoError;
    return failed;
  }
  port_ = acceptor.local_endpoint().port();
  listen_fd_ = ::fcntl(acceptor.native_handle(), F_DUPFD_CLOEXEC, 0);  // not for local agents
  acceptor_ = std::thread([this] { accept_loop(); });
  coordinator_log("listening on " + address->host + ":" + std::to_string(port_) + " for " +
                  std::to_string(options_.agents) + " agents");
  return {};
}

void Coordinator::accept_loop() {
  // A peer that stops reading cannot block whoever sends to it for longer than an agent may be
  // silent: the send fails and the agent is lost (send_to).
  const auto send_timeout =
      std::chrono::duration_cast<std::chrono::microseconds>(options_.agent_lost_after);
  const timeval timeout{static_cast<time_t>(send_timeout.count() / 1000000),
                        static_cast<suseconds_t>(send_timeout.count() % 1000000)};
  while (!stopping_) {
    pollfd ready{listen_fd_, POLLIN, 0};
    if (::poll(&ready, 1, 100) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    if (handshakes_under_way_ >= kMaxHandshakesUnderWay) {
      coordinator_log("closing connection from " + peer_address(fd) +
                      " at once: " + std::to_string(kMaxHandshakesUnderWay) +
                      " connections are already authenticating");
      ::close(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    std::lock_guard lock(connections_mutex_);
    // Finished connection threads are collected here, so thousands of refused peers do not
    // accumulate threads.
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (it->channel == nullptr && it->thread.joinable()) {
        it->thread.join();
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
    ++handshakes_under_way_;  // until serve_connection's handshake ends
    auto& connection = connections_.emplace_back();
    connection.remote = peer_address(fd);
    connection.channel = std::make_shared<control::Channel>(fd, connection.remote);
    connection.thread = std::thread([this, &connection] { serve_connection(connection); });
  }
}

Result<std::string> Coordinator::handshake(Connection& connection) {
  control::Channel& channel = *connection.channel;
  const std::string nonce = control::make_nonce();
  FAULTLINE_RETURN_IF_ERROR(channel.send_message(
      "challenge", {{"nonce", nonce}, {"version", control::kProtocolVersion}}));
  auto auth = channel.receive(options_.handshake_timeout);
  if (!auth.ok()) return std::move(auth).take_error();
  FAULTLINE_RETURN_IF_ERROR(control::validate_message(auth.value(), {"auth"}));
  if (auth->at("seq") != 0) {
    return Error{ErrorCode::kProtocolViolation, "auth must be the first message (seq 0)"};
  }
  if (!control::answer_is_valid(options_.token, nonce, control::Prover::kAgent,
                                auth->at("answer"))) {
    connection.scenario_join =
        deliberate_joins_ > 0 &&
        control::answer_is_valid(control::kScenarioWrongToken, nonce, control::Prover::kAgent,
                                 auth->at("answer"));
    (void)channel.send_message("reject", {{"reason", "authentication failed: wrong token"}});
    return Error{ErrorCode::kInvalidArgument, "authentication failed: wrong token"};
  }
  const auto& hello = auth->at("hello");
  if (!hello.contains("host") || !hello.at("host").is_string() || !hello.contains("pid") ||
      !hello.at("pid").is_number_unsigned()) {
    return Error{ErrorCode::kProtocolViolation, "hello lacks host (string) or pid (unsigned)"};
  }
  // The hello becomes the agent's record in the report: only what its schema allows.
  if (const auto problems =
          agent_record_problems(agent_record_of(hello, "agent", connection.remote));
      !problems.empty()) {
    const std::string reason = "the hello breaks the report's agent record: " + problems.front();
    (void)channel.send_message("reject", {{"reason", reason}});
    return Error{ErrorCode::kProtocolViolation, reason};
  }
  std::string agent_id;
  {
    std::lock_guard lock(connections_mutex_);
    if (registered_ - freed_places_ >= options_.agents) {
      (void)channel.send_message(
          "reject", {{"reason", "the coordinator has all " + std::to_string(options_.agents) +
                                    " agents it expects"}});
      return Error{ErrorCode::kInvalidArgument, "one agent too many"};
    }
    agent_id = "agent-" + std::to_string(++registered_);
    channels_[agent_id] = connection.channel;
  }
  const std::string session = control::make_nonce().substr(0, 16);
  channel.set_session(session);
  (void)channel.send_message(
      "welcome", {{"agent_id", agent_id},
                  {"heartbeat_ms", static_cast<uint64_t>(options_.heartbeat.count())},
                  {"silence_ms", static_cast<uint64_t>(options_.agent_lost_after.count())},
                  {"session", session},
                  {"answer", control::answer_challenge(options_.token, auth->at("nonce"),
                                                       control::Prover::kCoordinator)}});
  nlohmann::json joined = hello;
  joined["remote"] = connection.remote;
  joined["session"] = session;
  events_.push({EventKind::kJoined, agent_id, std::move(joined), ""});
  return agent_id;
}

void Coordinator::serve_connection(Connection& connection) {
  const std::shared_ptr<control::Channel> owned = connection.channel;
  control::Channel& channel = *owned;
  auto agent_id = handshake(connection);
  --handshakes_under_way_;
  if (!agent_id.ok()) {
    // A scenario's own refused join is its step's finding, in the report; not an intruder.
    if (!connection.scenario_join)
      coordinator_log("closing connection from " + connection.remote + ": " +
                      agent_id.error().describe());
    std::lock_guard lock(connections_mutex_);
    connection.channel.reset();
    return;
  }
  uint64_t expected_seq = 1;  // the auth message was 0
  std::string session;
  auto last_heartbeat = std::chrono::steady_clock::now();
  for (;;) {
    auto message = channel.receive(options_.heartbeat);
    // The agent's sign that this coordinator lives, however busy or idle its loop is.
    if (const auto now = std::chrono::steady_clock::now();
        now - last_heartbeat >= options_.heartbeat) {
      (void)channel.send_message("heartbeat");
      last_heartbeat = now;
    }
    if (!message.ok() && message.error().code == ErrorCode::kTimeout) continue;
    std::string problem;
    if (!message.ok()) {
      problem = message.error().describe();
    } else if (auto valid = control::validate_message(
                   message.value(), {"heartbeat", "endpoint_info", "barrier", "step",
                                     "scenario_result", "program_started", "program_result"});
               !valid.ok()) {
      problem = valid.error().describe();
    } else if (message->at("seq") != expected_seq) {
      problem = "frame out of order: seq " + message->at("seq").dump() + ", expected " +
                std::to_string(expected_seq);
    } else {
      ++expected_seq;
      events_.push({EventKind::kMessage, agent_id.value(), std::move(message).value(), ""});
      continue;
    }
    if (!stopping_ && !released_)
      coordinator_log("closing connection from " + connection.remote + " (" + agent_id.value() +
                      "): " + problem);
    channel.shutdown();
    events_.push({EventKind::kLost, agent_id.value(), nullptr, problem});
    // The acceptor collects this thread; a send still under way keeps the channel alive.
    std::lock_guard lock(connections_mutex_);
    channels_.erase(agent_id.value());
    connection.channel.reset();
    return;
  }
}

std::shared_ptr<control::Channel> Coordinator::channel_of(const std::string& agent_id) {
  std::lock_guard lock(connections_mutex_);
  auto it = channels_.find(agent_id);
  return it == channels_.end() ? nullptr : it->second;
}

void Coordinator::send_to(const std::string& agent_id, std::string_view type, nlohmann::json body) {
  const AgentRecord* record = agent(agent_id);
  if (record == nullptr || record->lost) return;
  const auto channel = channel_of(agent_id);
  if (channel == nullptr) return;
  if (auto sent = channel->send_message(type, std::move(body)); !sent.ok()) {
    // Part of a frame may have gone: the stream is unusable. The next deadline check loses
    // the agent for this reason, before the silence the blocked send caused can count.
    send_failures_.emplace(agent_id, sent.error().describe());
    channel->shutdown();
  }
}

}  // namespace faultline::harness
