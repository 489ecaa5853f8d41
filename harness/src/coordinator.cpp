#include "faultline/harness/coordinator.hpp"

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

#include "faultline/harness/control/auth.hpp"
#include "faultline/harness/control/messages.hpp"
#include "faultline/harness/net_address.hpp"
#include "faultline/harness/pair_schedule.hpp"

namespace faultline::harness {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// After one side reports a failure, how long the other side gets to report its own view.
constexpr auto kGraceAfterFirstFailure = 2s;
// Connections between accept and the end of their handshake (each holds a thread for up to
// the handshake timeout); more are closed at once, so a flood cannot exhaust threads.
constexpr int kMaxHandshakesUnderWay = 64;

void log(const std::string& text) { std::cerr << "faultline coordinator: " << text << std::endl; }

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

// Which side's result speaks for the run: the most specific failure.
int severity(Verdict verdict) {
  switch (verdict) {
    case Verdict::kCrashed: return 6;
    case Verdict::kFail: return 5;
    case Verdict::kError: return 4;
    case Verdict::kTimeout: return 3;
    case Verdict::kSkip: return 2;
    case Verdict::kXfail: return 1;
    case Verdict::kPass: return 0;
  }
  return 4;
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
    Error failed =
        errno_error("bind", error.value(), "listening on " + address->text());
    failed.code = ErrorCode::kIoError;
    return failed;
  }
  port_ = acceptor.local_endpoint().port();
  listen_fd_ = ::fcntl(acceptor.native_handle(), F_DUPFD_CLOEXEC, 0);  // not for local agents
  acceptor_ = std::thread([this] { accept_loop(); });
  log("listening on " + address->host + ":" + std::to_string(port_) + " for " +
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
      log("closing connection from " + peer_address(fd) + " at once: " +
          std::to_string(kMaxHandshakesUnderWay) + " connections are already authenticating");
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
    connection.channel = std::make_unique<control::Channel>(fd, connection.remote);
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
    (void)channel.send_message("reject", {{"reason", "authentication failed: wrong token"}});
    return Error{ErrorCode::kInvalidArgument, "authentication failed: wrong token"};
  }
  const auto& hello = auth->at("hello");
  if (!hello.contains("host") || !hello.at("host").is_string() || !hello.contains("pid") ||
      !hello.at("pid").is_number_unsigned()) {
    return Error{ErrorCode::kProtocolViolation, "hello lacks host (string) or pid (unsigned)"};
  }
  std::string agent_id;
  {
    std::lock_guard lock(connections_mutex_);
    if (registered_ == options_.agents) {
      (void)channel.send_message(
          "reject", {{"reason", "the coordinator has all " + std::to_string(options_.agents) +
                                    " agents it expects"}});
      return Error{ErrorCode::kInvalidArgument, "one agent too many"};
    }
    agent_id = "agent-" + std::to_string(++registered_);
    channels_[agent_id] = &channel;
  }
  const std::string session = control::make_nonce().substr(0, 16);
  channel.set_session(session);
  (void)channel.send_message(
      "welcome", {{"agent_id", agent_id},
                  {"heartbeat_ms", static_cast<uint64_t>(options_.heartbeat.count())},
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
  control::Channel& channel = *connection.channel;
  auto agent_id = handshake(connection);
  --handshakes_under_way_;
  if (!agent_id.ok()) {
    log("closing connection from " + connection.remote + ": " + agent_id.error().describe());
    std::lock_guard lock(connections_mutex_);
    connection.channel.reset();
    return;
  }
  uint64_t expected_seq = 1;  // the auth message was 0
  std::string session;
  for (;;) {
    auto message = channel.receive(24h);
    std::string problem;
    if (!message.ok()) {
      problem = message.error().describe();
    } else if (auto valid = control::validate_message(
                   message.value(),
                   {"heartbeat", "endpoint_info", "barrier", "step", "scenario_result"});
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
      log("closing connection from " + connection.remote + " (" + agent_id.value() +
          "): " + problem);
    channel.shutdown();
    events_.push({EventKind::kLost, agent_id.value(), nullptr, problem});
    return;
  }
}

AgentRecord* Coordinator::agent(const std::string& id) {
  for (auto& record : agents_) {
    if (record.id == id) return &record;
  }
  return nullptr;
}

control::Channel* Coordinator::channel_of(const std::string& agent_id) {
  std::lock_guard lock(connections_mutex_);
  auto it = channels_.find(agent_id);
  return it == channels_.end() ? nullptr : it->second;
}

void Coordinator::send_to(const std::string& agent_id, std::string_view type, nlohmann::json body) {
  const AgentRecord* record = agent(agent_id);
  if (record == nullptr || record->lost) return;
  control::Channel* channel = channel_of(agent_id);
  if (channel == nullptr) return;
  if (auto sent = channel->send_message(type, std::move(body)); !sent.ok()) {
    // Part of a frame may have gone: the stream is unusable. The next deadline check loses
    // the agent for this reason, before the silence the blocked send caused can count.
    send_failures_.emplace(agent_id, sent.error().describe());
    channel->shutdown();
  }
}

Status Coordinator::wait_for_agents(std::chrono::milliseconds timeout) {
  struct Quiet : RunObserver {
  } quiet;
  const auto deadline = Clock::now() + timeout;
  while (agents_.size() < options_.agents) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return Error{ErrorCode::kTimeout, "only " + std::to_string(agents_.size()) + " of " +
                                            std::to_string(options_.agents) +
                                            " agents connected within " +
                                            std::to_string(timeout.count() / 1000) + " s"}
          .with_hint("start the agents with --coordinator pointing here and the same token");
    }
    if (auto event = events_.pop(std::min(left, std::chrono::milliseconds(100))))
      handle(*event, quiet);
  }
  return {};
}

Coordinator::ActiveRun* Coordinator::active_run(uint64_t run_id, const std::string& agent_id) {
  for (auto& run : active_) {
    if (run.result.run_id == run_id && !run.finished && run.involves(agent_id)) {
      return &run;
    }
  }
  return nullptr;
}

void Coordinator::handle(const Event& event, RunObserver& observer) {
  if (event.kind == EventKind::kJoined) {
    AgentRecord record;
    record.id = event.agent_id;
    record.host = event.message.at("host");
    record.pid = event.message.at("pid");
    record.remote = event.message.at("remote");
    record.hello = event.message;
    record.last_seen = Clock::now();
    log(record.id + " joined from " + record.remote + " (host " + record.host + ", pid " +
        std::to_string(record.pid) + ")");
    agents_.push_back(std::move(record));
    // Joins are handled in whatever order their threads got here; keep the order of the ids
    // (agent-2 before agent-10), so that pairs and rings are the same from run to run.
    std::sort(agents_.begin(), agents_.end(), [](const AgentRecord& a, const AgentRecord& b) {
      return a.id.size() != b.id.size() ? a.id.size() < b.id.size() : a.id < b.id;
    });
    return;
  }
  if (event.kind == EventKind::kLost) {
    mark_lost(event.agent_id, event.reason, observer);
    return;
  }
  AgentRecord* record = agent(event.agent_id);
  if (record == nullptr || record->lost) return;
  record->last_seen = Clock::now();
  const nlohmann::json& message = event.message;
  const std::string type = message.at("type");
  if (type == "heartbeat") return;
  ActiveRun* run = active_run(message.at("run_id"), event.agent_id);
  if (run == nullptr) return;  // a late message for a run that already ended
  const auto& agents = run->result.agents;

  if (type == "step") {
    run->last_step[event.agent_id] = message.at("name");
    run->step_started[event.agent_id] = Clock::now();
    observer.step(run->result, event.agent_id, message.at("name"));
  } else if (type == "endpoint_info") {
    run->infos[event.agent_id] = message.at("info");
    if (run->infos.size() == agents.size()) {
      // A pair gets the other side's info; a ring gets every rank's, in rank order.
      nlohmann::json ranks = nlohmann::json::array();
      for (const auto& agent_id : agents) ranks.push_back(run->infos.at(agent_id));
      for (size_t i = 0; i < agents.size(); ++i) {
        const nlohmann::json info =
            run->spec->topology == "ring" ? nlohmann::json{{"ranks", ranks}} : ranks.at(1 - i);
        send_to(agents[i], "peer_info", {{"run_id", run->result.run_id}, {"info", info}});
      }
      run->infos.clear();  // a later exchange (a reconnect) is a round of its own
    }
  } else if (type == "barrier") {
    auto& arrived = run->barriers[message.at("name")];
    arrived.insert(event.agent_id);
    if (arrived.size() == agents.size()) {
      for (const auto& agent_id : agents) {
        send_to(agent_id, "barrier_release",
                {{"run_id", run->result.run_id}, {"name", message.at("name")}});
      }
      run->barriers.erase(message.at("name"));  // the same name may be reached again
    }
  } else if (type == "scenario_result") {
    nlohmann::json side = message;
    side.erase("seq");
    side.erase("session");
    side.erase("type");
    run->result.sides[event.agent_id] = side;
    const auto verdict =
        verdict_from_string(message.at("verdict").get<std::string>()).value_or(Verdict::kError);
    if (run->result.sides.size() == agents.size() || verdict == Verdict::kCrashed) {
      finish(*run, observer);
      for (const auto& agent_id : agents) {
        if (!run->result.sides.contains(agent_id))
          send_to(agent_id, "abort_scenario", {{"run_id", run->result.run_id}});
      }
    } else if (verdict != Verdict::kPass && !run->grace_until) {
      run->grace_until = Clock::now() + kGraceAfterFirstFailure;
    }
  }
}

void Coordinator::finish(ActiveRun& run, RunObserver& observer) {
  // The most specific failure among the sides speaks for the run, named by its agent.
  Verdict verdict = Verdict::kPass;
  const nlohmann::json* speaker = nullptr;
  std::string speaker_id;
  for (const auto& [agent_id, side] : run.result.sides.items()) {
    const Verdict side_verdict =
        verdict_from_string(side.value("verdict", "error")).value_or(Verdict::kError);
    if (speaker == nullptr || severity(side_verdict) > severity(verdict)) {
      verdict = side_verdict;
      speaker = &side;
      speaker_id = agent_id;
    }
  }
  if (run.result.sides.size() < run.result.agents.size() && verdict == Verdict::kPass)
    verdict = Verdict::kError;
  std::string observed;
  std::string evidence;
  std::string hint;
  if (speaker != nullptr && verdict != Verdict::kPass) {
    const auto rank = static_cast<size_t>(
        std::find(run.result.agents.begin(), run.result.agents.end(), speaker_id) -
        run.result.agents.begin());
    const std::string role = run.spec->topology == "ring" ? "rank " + std::to_string(rank)
                             : rank == 0                  ? std::string("initiator")
                                                          : std::string("responder");
    observed = speaker_id + " (" + role + "): " + speaker->value("observed", "");
    evidence = speaker->value("evidence", "");
    hint = speaker->value("hint", "");
    run.result.expected = speaker->value("expected", "");
  }
  finish_with(run, verdict, observed, evidence, hint, observer);
}

void Coordinator::finish_with(ActiveRun& run, Verdict verdict, std::string observed,
                              std::string evidence, std::string hint, RunObserver& observer) {
  run.finished = true;
  if (!observed.empty()) run.result.observed = std::move(observed);
  if (!evidence.empty()) run.result.evidence = std::move(evidence);
  if (!hint.empty()) run.result.hint = std::move(hint);
  // A known failure listed in an exclude file is xfail; under --strict a skip fails.
  const bool failed =
      verdict == Verdict::kFail || verdict == Verdict::kTimeout || verdict == Verdict::kCrashed;
  if (failed && run.spec != nullptr && !run.spec->exclude_reason.empty()) {
    run.result.evidence = "known failure (" + std::string(to_string(verdict)) +
                          "), excluded: " + run.spec->exclude_reason + "; " + run.result.evidence;
    verdict = Verdict::kXfail;
  } else if (verdict == Verdict::kSkip && run.strict) {
    run.result.observed = "skipped under --strict: " + run.result.observed;
    run.result.expected = "the scenario runs (--strict)";
    verdict = Verdict::kFail;
  }
  run.result.verdict = verdict;
  run.result.duration_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - run.started).count();
  for (const auto& agent_id : run.result.agents) {
    send_to(agent_id, "run_result",
            {{"run_id", run.result.run_id},
             {"id", run.result.scenario},
             {"suite", suite_},
             {"verdict", to_string(run.result.verdict)},
             {"duration_ms", run.result.duration_ms}});
  }
  observer.run_finished(run.result);
}

void Coordinator::mark_lost(const std::string& agent_id, const std::string& reason,
                            RunObserver& observer) {
  AgentRecord* record = agent(agent_id);
  if (record == nullptr || record->lost) return;
  record->lost = true;
  record->lost_reason = reason;
  log(agent_id + " lost: " + reason);
  if (control::Channel* channel = channel_of(agent_id)) channel->shutdown();
  for (auto& run : active_) {
    if (run.finished || !run.involves(agent_id)) continue;
    finish_with(run, Verdict::kError,
                "agent lost: " + agent_id + " (host " + record->host + ", pid " +
                    std::to_string(record->pid) + ")",
                reason + "; last step of " + agent_id + ": " + run.last_step[agent_id],
                "the agent process died or its host stopped answering; check the agent's log",
                observer);
    for (const auto& other : run.result.agents) {
      if (other != agent_id) send_to(other, "abort_scenario", {{"run_id", run.result.run_id}});
    }
  }
}

void Coordinator::check_deadlines(RunObserver& observer) {
  for (const auto& [agent_id, reason] : std::exchange(send_failures_, {}))
    mark_lost(agent_id, reason, observer);
  const auto now = Clock::now();
  for (auto& record : agents_) {
    if (!record.lost && now - record.last_seen > options_.agent_lost_after) {
      mark_lost(record.id,
                "no message or heartbeat for " + std::to_string(options_.agent_lost_after.count()) +
                    " ms",
                observer);
    }
  }
  for (auto& run : active_) {
    if (run.finished) continue;
    if (run.grace_until && now > *run.grace_until) {
      finish(run, observer);
    } else if (auto stuck = std::find_if(run.step_started.begin(), run.step_started.end(),
                                         [&](const auto& entry) {
                                           return !run.result.sides.contains(entry.first) &&
                                                  now - entry.second > options_.step_deadline;
                                         });
               stuck != run.step_started.end()) {
      finish_with(run, Verdict::kTimeout,
                  stuck->first + " spent more than " +
                      std::to_string(options_.step_deadline.count()) + " ms in one step",
                  "the step: " + run.last_step[stuck->first],
                  "the step hung; a completion that never came, or a peer that never reached "
                  "the same barrier, is the usual cause",
                  observer);
    } else if (now > run.deadline) {
      std::string steps;
      for (const auto& [agent_id, step] : run.last_step)
        steps += (steps.empty() ? "" : "; ") + agent_id + ": " + step;
      finish_with(run, Verdict::kTimeout, "no result within the deadline",
                  "last steps: " + (steps.empty() ? std::string("none") : steps),
                  "the scenario hung; a completion that never came is the usual cause", observer);
    } else {
      continue;
    }
    for (const auto& agent_id : run.result.agents) {
      send_to(agent_id, "abort_scenario", {{"run_id", run.result.run_id}});
    }
  }
}

std::vector<ScenarioRun> Coordinator::run(const std::vector<ScenarioSpec>& scenarios,
                                          const RunSettings& settings, RunObserver& observer) {
  std::vector<ScenarioRun> results;
  suite_ = settings.suite;
  const auto pairs = pair_rounds(agents_.size());
  // A ring runs once over every agent, in the order they joined.
  std::vector<std::vector<std::vector<size_t>>> ring_round(1, std::vector<std::vector<size_t>>(1));
  for (size_t i = 0; i < agents_.size(); ++i) ring_round[0][0].push_back(i);
  for (const ScenarioSpec& scenario : scenarios) {
    std::vector<std::vector<std::vector<size_t>>> rounds = ring_round;
    if (scenario.topology != "ring") {
      rounds.clear();
      for (const auto& round : pairs) {
        rounds.emplace_back();
        for (const auto& [a, b] : round) rounds.back().push_back({a, b});
      }
    }
    for (size_t round = 0; round < rounds.size(); ++round) {
      active_.clear();
      for (const auto& members : rounds[round]) {
        ActiveRun run;
        run.spec = &scenario;
        run.strict = settings.strict;
        run.result.run_id = next_run_id_++;
        run.result.scenario = scenario.id;
        run.result.tags = scenario.tags;
        run.result.source = scenario.source;
        run.result.sha256 = scenario.sha256;
        run.result.seed = settings.seed;
        run.result.round = round + 1;
        for (size_t index : members) run.result.agents.push_back(agents_[index].id);
        run.result.initiator = run.result.agents.at(0);
        run.result.responder = run.result.agents.at(1);
        run.result.expected = "every side passes";
        run.started = Clock::now();
        run.deadline = run.started + scenario.deadline;
        active_.push_back(std::move(run));
      }
      for (auto& run : active_) {
        observer.run_started(run.result);
        for (const auto& id : run.result.agents) {
          const AgentRecord* record = agent(id);
          if (record->lost) {
            finish_with(
                run, Verdict::kError, "agent lost: " + id + " was lost earlier",
                record->lost_reason,
                "the agent process died or its host stopped answering; check the agent's log",
                observer);
            break;
          }
        }
        if (run.finished) continue;
        const size_t size = run.result.agents.size();
        for (size_t rank = 0; rank < size; ++rank) {
          const bool ring = scenario.topology == "ring";
          nlohmann::json params = {{"seed", settings.seed},
                                   {"role_name", scenario.roles.at(ring ? 0 : rank)},
                                   {"rank", rank},
                                   {"size", size}};
          if (!scenario.document.is_null()) params["document"] = scenario.document;
          send_to(run.result.agents[rank], "run_scenario",
                  {{"run_id", run.result.run_id},
                   {"scenario", scenario.id},
                   {"role", ring ? "rank" : (rank == 0 ? "initiator" : "responder")},
                   {"params", params},
                   {"target", nlohmann::json::object()},
                   {"deadline_ms", static_cast<uint64_t>(scenario.deadline.count())}});
        }
      }
      auto unfinished = [&] {
        return std::any_of(active_.begin(), active_.end(),
                           [](const ActiveRun& r) { return !r.finished; });
      };
      while (unfinished()) {
        if (auto event = events_.pop(100ms)) handle(*event, observer);
        check_deadlines(observer);
      }
      for (auto& run : active_) results.push_back(run.result);
    }
  }
  active_.clear();
  return results;
}

void Coordinator::shutdown_agents() {
  released_ = true;
  for (const auto& record : agents_) send_to(record.id, "shutdown", nlohmann::json::object());
}

}  // namespace faultline::harness
