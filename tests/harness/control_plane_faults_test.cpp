// The coordinator and agents as separate processes on 127.0.0.1, and what happens when a peer
// misbehaves: a wrong token, a killed agent, a client sending garbage, no coordinator at all.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness_test_paths.hpp"
#include "support/background_process.hpp"

using namespace std::chrono_literals;
using faultline::testing::BackgroundProcess;
using faultline::testing::read_text_file;
using faultline::testing::TempDir;

namespace {

struct Coordinator {
  std::unique_ptr<BackgroundProcess> process;
  uint16_t port = 0;
};

// A coordinator on an ephemeral port of 127.0.0.1, writing its report into `dir`.
Coordinator start_coordinator(const TempDir& dir, const std::string& token, int agents,
                              const std::string& scenarios) {
  const std::string port_file = dir.path() + "/port";
  Coordinator coordinator;
  coordinator.process = std::make_unique<BackgroundProcess>(
      "FAULTLINE_ENABLE_TEST_SCENARIOS=1 FAULTLINE_TOKEN=" + token + " exec " + kFaultline +
      " coordinator --listen 127.0.0.1:0 --agents " + std::to_string(agents) + " --port-file " +
      port_file + " --report-dir " + dir.path() + "/report " + scenarios);
  for (int i = 0; i < 500 && coordinator.port == 0; ++i) {
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

bool has_child_process(pid_t parent) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string stat = read_text_file(entry.path().string() + "/stat");
    const auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    // After "pid (comm) " come the state and then the parent pid.
    std::istringstream fields(stat.substr(close_paren + 2));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid == parent) return true;
  }
  return false;
}

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

// A raw TCP client that speaks whatever bytes the test gives it.
class RawClient {
 public:
  explicit RawClient(uint16_t port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  }
  ~RawClient() { close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void send_bytes(const std::string& bytes) const {
    REQUIRE(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(bytes.size()));
  }
  void send_frame(const std::string& body) const {
    const auto length = static_cast<uint32_t>(body.size());
    const char header[4] = {char(length >> 24), char(length >> 16), char(length >> 8),
                            char(length)};
    send_bytes(std::string(header, 4) + body);
  }
  void finish_sending() const { ::shutdown(fd_, SHUT_WR); }
  // Reads until the coordinator closes the connection; false if it is still open after 8 s.
  bool closed_by_peer() const {
    const auto deadline = std::chrono::steady_clock::now() + 8s;
    char buffer[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd waiting{fd_, POLLIN, 0};
      if (poll(&waiting, 1, 100) <= 0) continue;
      const ssize_t got = recv(fd_, buffer, sizeof buffer, 0);
      if (got <= 0) return true;  // EOF or reset
    }
    return false;
  }

 private:
  int fd_;
};

}  // namespace

TEST_CASE("an agent with the wrong token is refused and says so", "[integration][ofi]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "right-token", 2, "pingpong");
  const std::string token_file = dir.path() + "/wrong";
  std::ofstream(token_file) << "wrong-token\n";
  std::filesystem::permissions(token_file, std::filesystem::perms::owner_read);
  BackgroundProcess agent(kFaultline + " agent --coordinator 127.0.0.1:" +
                          std::to_string(coordinator.port) + " --token-file " + token_file);
  const auto code = agent.wait(10s);
  INFO(agent.err());
  REQUIRE(code.has_value());
  CHECK(*code != 0);
  CHECK_THAT(agent.err(), Catch::Contains("refused this agent"));
  CHECK_THAT(agent.err(), Catch::Contains("authentication failed: wrong token"));
  CHECK_THAT(agent.err(), !Catch::Contains("wrong-token"));
  CHECK(coordinator.process->wait_for_output("authentication failed: wrong token", 5s));
  CHECK_THAT(coordinator.process->err(), !Catch::Contains("right-token"));
}

TEST_CASE("an agent pointed at a closed port gives up within its budget, saying what it tried",
          "[integration]") {
  const std::string address = "127.0.0.1:" + std::to_string(closed_port());
  BackgroundProcess agent("FAULTLINE_TOKEN=t exec " + kFaultline + " agent --coordinator " +
                          address + " --connect-timeout 2");
  const auto started = std::chrono::steady_clock::now();
  const auto code = agent.wait(15s);
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
  INFO(agent.err());
  REQUIRE(code.has_value());
  CHECK(*code == 2);
  CHECK(seconds.count() < 5);
  CHECK_THAT(agent.err(), Catch::Contains("could not reach the coordinator at " + address));
  CHECK_THAT(agent.err(), Catch::Contains("attempts over"));
  CHECK_THAT(agent.err(), Catch::Contains("Connection refused"));
}

TEST_CASE("garbage, oversized, truncated and mistyped frames close only their connection",
          "[integration][ofi]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "token", 2, "pingpong");
  const auto port = coordinator.port;
  {
    RawClient garbage(port);
    garbage.send_frame("\x01\xff not json at all");
    CHECK(garbage.closed_by_peer());
  }
  {
    RawClient oversized(port);
    oversized.send_bytes("\xff\xff\xff\xff");
    CHECK(oversized.closed_by_peer());
  }
  {
    RawClient truncated(port);
    truncated.send_bytes(std::string("\x00\x00\x00\x64", 4) + "{\"type\":");
    truncated.finish_sending();
    CHECK(truncated.closed_by_peer());
  }
  {
    RawClient not_an_object(port);
    not_an_object.send_frame("[1,2,3]");
    CHECK(not_an_object.closed_by_peer());
  }
  {
    RawClient out_of_order(port);
    out_of_order.send_frame(R"({"type":"scenario_result","seq":0,"session":"","run_id":1,)"
                            R"("verdict":"pass"})");
    CHECK(out_of_order.closed_by_peer());
  }
  {
    RawClient wrong_field(port);
    wrong_field.send_frame(R"({"type":"auth","seq":0,"session":"","answer":7,"version":1,)"
                           R"("hello":{}})");
    CHECK(wrong_field.closed_by_peer());
  }
  auto first = start_agent(port, "token");
  auto second = start_agent(port, "token");
  const auto code = coordinator.process->wait(60s);
  const std::string log = coordinator.process->err();
  INFO(log);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK_THAT(log, Catch::Contains("is not valid JSON"));
  CHECK_THAT(log, Catch::Contains("exceeds the maximum"));
  CHECK_THAT(log, Catch::Contains("truncated"));
  CHECK_THAT(log, Catch::Contains("not an object"));
  CHECK_THAT(log, Catch::Contains("out of order"));
  CHECK_THAT(log, Catch::Contains("\"auth\" message lacks \"answer\""));
  const auto report = nlohmann::json::parse(read_text_file(dir.path() + "/report/report.json"));
  CHECK(report.at("scenarios").at(0).at("verdict") == "pass");
}

TEST_CASE("an agent killed mid-scenario is lost at once, and the next scenario runs",
          "[integration][ofi][slow]") {
  TempDir dir;
  auto coordinator = start_coordinator(dir, "token", 3, "test.sleep pingpong");
  std::vector<std::unique_ptr<BackgroundProcess>> agents;
  for (int i = 0; i < 3; ++i) agents.push_back(start_agent(coordinator.port, "token"));

  // The victim is an agent whose scenario child is running (sleeping 10 s).
  pid_t victim = 0;
  for (int i = 0; i < 1000 && victim == 0; ++i) {
    for (const auto& agent : agents) {
      if (has_child_process(agent->pid())) victim = agent->pid();
    }
    std::this_thread::sleep_for(10ms);
  }
  REQUIRE(victim != 0);
  std::this_thread::sleep_for(500ms);
  kill(victim, SIGKILL);

  const auto code = coordinator.process->wait(90s);
  INFO(coordinator.process->err());
  REQUIRE(code.has_value());
  CHECK(*code == 3);  // an agent lost is a harness error, not a conformance failure
  const auto report = nlohmann::json::parse(read_text_file(dir.path() + "/report/report.json"));
  std::string victim_id;
  for (const auto& agent : report.at("run").at("agents")) {
    if (agent.at("pid") == victim) victim_id = agent.at("id");
  }
  REQUIRE(!victim_id.empty());
  const auto& runs = report.at("scenarios");
  REQUIRE(runs.size() == 6);
  const auto& interrupted = runs.at(0);
  CAPTURE(interrupted.dump(2));
  CHECK(interrupted.at("verdict") == "error");
  CHECK_THAT(interrupted.at("observed").get<std::string>(),
             Catch::Contains("agent lost: " + victim_id));
  // Noticed at once: well before the 10 s sleep would have ended, let alone the deadline.
  CHECK(interrupted.at("duration_ms").get<double>() < 8000);
  size_t survivors_pingpong_passed = 0;
  for (const auto& run : runs) {
    const bool with_victim = run.at("agents").at("initiator") == victim_id ||
                             run.at("agents").at("responder") == victim_id;
    if (with_victim) CHECK(run.at("verdict") == "error");
    if (!with_victim && run.at("id") == "pingpong" && run.at("verdict") == "pass")
      ++survivors_pingpong_passed;
  }
  CHECK(survivors_pingpong_passed == 1);
}
