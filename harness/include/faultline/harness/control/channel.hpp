#pragma once

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "faultline/core/status.hpp"
#include "faultline/harness/control/frame.hpp"

namespace faultline::harness::control {

/// A framed JSON channel over a connected stream socket (TCP to the coordinator, or the
/// socketpair between an agent and its scenario child). Owns the descriptor.
/// Thread-safety: `send` may be called from several threads; one thread receives.
class Channel {
 public:
  explicit Channel(int fd, std::string peer_name);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  /// Sends one frame as it is. Fails (kIoError) when the peer is gone, and (kTimeout) when the
  /// socket has a send timeout (SO_SNDTIMEO) and the peer read nothing for that long; after a
  /// failure the stream may hold part of a frame and the channel must be shut down.
  Status send(const nlohmann::json& message);
  /// Sends a message of `type`: `body` with this channel's next "seq" and its "session".
  Status send_message(std::string_view type, nlohmann::json body = nlohmann::json::object());
  void set_session(std::string session);
  /// The next message, waiting up to `timeout`. kTimeout when none came; kIoError at EOF
  /// (naming a truncated frame if one was cut off); kProtocolViolation for a bad frame.
  Result<nlohmann::json> receive(std::chrono::milliseconds timeout);
  /// Unblocks a receiver and refuses further traffic; safe from any thread.
  void shutdown();

  const std::string& peer_name() const { return peer_name_; }
  int fd() const { return fd_; }

 private:
  Status send_locked(const nlohmann::json& message);

  int fd_;
  std::string peer_name_;
  FrameDecoder decoder_;
  std::mutex send_mutex_;
  uint64_t next_seq_ = 0;  // guarded by send_mutex_
  std::string session_;    // guarded by send_mutex_
};

}  // namespace faultline::harness::control
