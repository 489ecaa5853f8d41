#pragma once

// Processes and raw peers for the control-plane tests: a coordinator and agents as separate
// processes on 127.0.0.1, and a client that speaks whatever bytes or frames a test gives it.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "faultline/harness/control/channel.hpp"
#include "faultline/harness/control/frame.hpp"
#include "support/background_process.hpp"

namespace faultline::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizedBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
#else
inline constexpr bool kSanitizedBuild = false;
#endif

struct CoordinatorProcess {
  std::unique_ptr<BackgroundProcess> process;
  uint16_t port = 0;
};

/// A coordinator on an ephemeral port of 127.0.0.1 with FAULTLINE_TOKEN=`token`, writing its
/// report into `dir`/report; `arguments` are the scenarios and any further options.
CoordinatorProcess start_coordinator(const TempDir& dir, const std::string& token, int agents,
                                     const std::string& arguments);

/// An agent of 127.0.0.1:`port` with FAULTLINE_TOKEN=`token`.
std::unique_ptr<BackgroundProcess> start_agent(uint16_t port, const std::string& token);

/// How many processes have `parent` as their parent, those named `name` only when it is given
/// (an agent's child running a scenario is "fl-scenario"; its spare, waiting, is not).
size_t child_process_count(pid_t parent, const std::string& name = "");
/// Whether some process has `parent` as its parent.
bool has_child_process(pid_t parent);

/// A port of 127.0.0.1 that nothing listens on.
uint16_t closed_port();

/// VmRSS of a process in KiB (0 when it is gone).
long resident_kib(pid_t pid);

/// A TCP client of 127.0.0.1:`port`. With `receive_buffer`, its socket's receive buffer is
/// set that small before it connects (a peer that reads little).
class RawClient {
 public:
  explicit RawClient(uint16_t port, int receive_buffer = 0);
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void send_bytes(const std::string& bytes) const;
  void send_frame(const std::string& body) const;
  void send_message(const nlohmann::json& message) const { send_frame(message.dump()); }
  /// The same without a test assertion (for threads other than the test's): false once the
  /// peer has closed the connection.
  bool try_send_message(const nlohmann::json& message) const;
  void finish_sending() const;
  /// The next frame, or nullopt when none came within `timeout` or the stream ended or broke.
  std::optional<nlohmann::json> read_message(std::chrono::milliseconds timeout);
  /// Reads until the peer closes the connection; false if it is still open after `timeout`.
  bool closed_by_peer(std::chrono::milliseconds timeout = std::chrono::seconds(8)) const;

 private:
  int fd_;
  harness::control::FrameDecoder decoder_;
};

/// The auth message an agent with `token` answers `challenge` with (protocol 2).
nlohmann::json auth_for(const nlohmann::json& challenge, const std::string& token);

/// A listening socket on 127.0.0.1 for a test that plays the coordinator.
class FakeCoordinator {
 public:
  FakeCoordinator();
  ~FakeCoordinator();
  FakeCoordinator(const FakeCoordinator&) = delete;
  FakeCoordinator& operator=(const FakeCoordinator&) = delete;
  uint16_t port() const { return port_; }
  std::unique_ptr<harness::control::Channel> accept_agent() const;

 private:
  int fd_;
  uint16_t port_ = 0;
};

/// Plays the coordinator's side of the handshake up to the welcome, whose answer is made with
/// `welcome_token`; returns the agent's auth.
nlohmann::json handshake_as_coordinator(harness::control::Channel& agent,
                                        const std::string& welcome_token);

/// The next message of `type` from the agent (others it sends first are passed over).
nlohmann::json await_from_agent(harness::control::Channel& agent, const std::string& type);

/// A raw client of the coordinator at `port` that authenticated with `token` and read its
/// welcome; what it sends or reads from here on is the test's.
std::unique_ptr<RawClient> joined_raw_client(uint16_t port, const std::string& token,
                                             int receive_buffer = 0);

/// A raw client authenticated as an agent (token "token"): its session and the sequence number
/// of its next message, so a test can send what a real agent never would.
struct RawAgent {
  RawClient client;
  std::string session;
  uint64_t seq = 1;

  explicit RawAgent(uint16_t port, nlohmann::json hello = nullptr);
  /// The welcome (or the reject) that answered the auth.
  nlohmann::json answer();
  /// Reads until a message of `type` comes.
  nlohmann::json await(const std::string& type);
  void send(nlohmann::json message);
};

}  // namespace faultline::testing
