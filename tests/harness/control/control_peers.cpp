#include "control_peers.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <thread>

#include "../harness_test_paths.hpp"
#include "faultline/harness/control/auth.hpp"
#include "faultline/harness/control/messages.hpp"

namespace faultline::testing {

using namespace std::chrono_literals;

CoordinatorProcess start_coordinator(const TempDir& dir, const std::string& token, int agents,
                                     const std::string& arguments) {
  const std::string port_file = dir.path() + "/port";
  CoordinatorProcess coordinator;
  coordinator.process = std::make_unique<BackgroundProcess>(
      "FAULTLINE_ENABLE_TEST_SCENARIOS=1 FAULTLINE_TOKEN=" + token + " exec " + kFaultline +
      " coordinator --listen 127.0.0.1:0 --agents " + std::to_string(agents) + " --port-file " +
      port_file + " --report-dir " + dir.path() + "/report " + arguments);
  for (int i = 0; i < 3000 && coordinator.port == 0; ++i) {  // 30 s: slow under sanitizers
    const std::string text = read_text_file(port_file);
    if (!text.empty() && text.back() == '\n')
      coordinator.port = static_cast<uint16_t>(std::stoi(text));
    std::this_thread::sleep_for(10ms);
  }
  INFO(coordinator.process->err());
  REQUIRE(coordinator.port != 0);
  return coordinator;
}

std::unique_ptr<BackgroundProcess> start_agent(uint16_t port, const std::string& token) {
  return std::make_unique<BackgroundProcess>(
      "FAULTLINE_ENABLE_TEST_SCENARIOS=1 FAULTLINE_TOKEN=" + token + " exec " + kFaultline +
      " agent --coordinator 127.0.0.1:" + std::to_string(port));
}

size_t child_process_count(pid_t parent, const std::string& name) {
  size_t children = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string stat = read_text_file(entry.path().string() + "/stat");
    const auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    // After "pid (comm) " come the state and then the parent pid.
    std::istringstream fields(stat.substr(close_paren + 2));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    const auto open_paren = stat.find('(');
    const std::string comm = stat.substr(open_paren + 1, close_paren - open_paren - 1);
    if (ppid == parent && (name.empty() || comm == name)) ++children;
  }
  return children;
}

bool has_child_process(pid_t parent) { return child_process_count(parent) > 0; }

uint16_t closed_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

long resident_kib(pid_t pid) {
  std::istringstream status(read_text_file("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmRSS:")) return std::stol(line.substr(6));
  }
  return 0;
}

RawClient::RawClient(uint16_t port, int receive_buffer) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
  if (receive_buffer > 0)
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
}

RawClient::~RawClient() { close(fd_); }

void RawClient::send_bytes(const std::string& bytes) const {
  REQUIRE(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(bytes.size()));
}

namespace {
std::string framed(const std::string& body) {
  const auto length = static_cast<uint32_t>(body.size());
  const char header[4] = {char(length >> 24), char(length >> 16), char(length >> 8), char(length)};
  return std::string(header, 4) + body;
}
}  // namespace

void RawClient::send_frame(const std::string& body) const { send_bytes(framed(body)); }

bool RawClient::try_send_message(const nlohmann::json& message) const {
  const std::string bytes = framed(message.dump());
  return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
         static_cast<ssize_t>(bytes.size());
}

void RawClient::finish_sending() const { ::shutdown(fd_, SHUT_WR); }

std::optional<nlohmann::json> RawClient::read_message(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto frame = decoder_.next();
    if (!frame.ok()) return std::nullopt;
    if (frame.value()) return std::move(*frame.value());
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd waiting{fd_, POLLIN, 0};
    if (poll(&waiting, 1, static_cast<int>(left.count())) <= 0) continue;
    std::byte chunk[4096];
    const ssize_t got = recv(fd_, chunk, sizeof chunk, 0);
    if (got <= 0) return std::nullopt;
    decoder_.feed(chunk, static_cast<size_t>(got));
  }
}

bool RawClient::closed_by_peer(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd waiting{fd_, POLLIN, 0};
    if (poll(&waiting, 1, 100) <= 0) continue;
    const ssize_t got = recv(fd_, buffer, sizeof buffer, 0);
    if (got <= 0) return true;  // EOF or reset
  }
  return false;
}

nlohmann::json auth_for(const nlohmann::json& challenge, const std::string& token) {
  using harness::control::Prover;
  return {
      {"type", "auth"},
      {"seq", 0},
      {"session", ""},
      {"answer", harness::control::answer_challenge(token, challenge.at("nonce"), Prover::kAgent)},
      {"nonce", harness::control::make_nonce()},
      {"version", harness::control::kProtocolVersion},
      {"hello", {{"host", "test"}, {"pid", 1}}}};
}

FakeCoordinator::FakeCoordinator() : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(listen(fd_, 4) == 0);
  socklen_t length = sizeof address;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
}

FakeCoordinator::~FakeCoordinator() { close(fd_); }

std::unique_ptr<harness::control::Channel> FakeCoordinator::accept_agent() const {
  const int agent = accept(fd_, nullptr, nullptr);
  REQUIRE(agent >= 0);
  return std::make_unique<harness::control::Channel>(agent, "agent");
}

nlohmann::json handshake_as_coordinator(harness::control::Channel& agent,
                                        const std::string& welcome_token) {
  using harness::control::Prover;
  const std::string nonce = harness::control::make_nonce();
  REQUIRE(agent.send_message("challenge", {{"nonce", nonce}, {"version", 2}}).ok());
  auto auth = agent.receive(10s);
  REQUIRE(auth.ok());
  agent.set_session("s");
  REQUIRE(agent
              .send_message("welcome", {{"agent_id", "agent-1"},
                                        {"heartbeat_ms", 1000},
                                        {"answer", harness::control::answer_challenge(
                                                       welcome_token, auth->at("nonce"),
                                                       Prover::kCoordinator)}})
              .ok());
  return auth.value();
}

nlohmann::json await_from_agent(harness::control::Channel& agent, const std::string& type) {
  for (int i = 0; i < 20; ++i) {
    auto message = agent.receive(10s);
    REQUIRE(message.ok());
    if (message->at("type") == type) return message.value();
  }
  FAIL("no " << type << " from the agent");
  return {};
}

std::unique_ptr<RawClient> joined_raw_client(uint16_t port, const std::string& token,
                                             int receive_buffer) {
  auto client = std::make_unique<RawClient>(port, receive_buffer);
  const auto challenge = client->read_message(5s);
  REQUIRE(challenge);
  client->send_message(auth_for(*challenge, token));
  REQUIRE(client->read_message(5s));  // the welcome
  return client;
}

RawAgent::RawAgent(uint16_t port, nlohmann::json hello) : client(port) {
  const auto challenge = client.read_message(5s);
  REQUIRE(challenge);
  nlohmann::json auth = auth_for(*challenge, "token");
  if (!hello.is_null()) auth["hello"] = std::move(hello);
  client.send_message(auth);
}

nlohmann::json RawAgent::answer() {
  const auto message = client.read_message(5s);
  REQUIRE(message);
  session = message->value("session", "");
  return *message;
}

nlohmann::json RawAgent::await(const std::string& type) {
  for (int i = 0; i < 50; ++i) {
    const auto message = client.read_message(10s);
    REQUIRE(message);
    if (message->at("type") == type) return *message;
  }
  FAIL("no " << type);
  return {};
}

void RawAgent::send(nlohmann::json message) {
  message["seq"] = seq++;
  message["session"] = session;
  client.send_message(message);
}

}  // namespace faultline::testing
