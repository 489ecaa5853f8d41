#include "faultline/harness/control/channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace faultline::harness::control {

Channel::Channel(int fd, std::string peer_name) : fd_(fd), peer_name_(std::move(peer_name)) {}

Channel::~Channel() {
  if (fd_ >= 0) ::close(fd_);
}

Status Channel::send_message(std::string_view type, nlohmann::json body) {
  std::lock_guard lock(send_mutex_);
  body["type"] = type;
  body["seq"] = next_seq_++;
  body["session"] = session_;
  return send_locked(body);
}

void Channel::set_session(std::string session) {
  std::lock_guard lock(send_mutex_);
  session_ = std::move(session);
}

Status Channel::send(const nlohmann::json& message) {
  std::lock_guard lock(send_mutex_);
  return send_locked(message);
}

Status Channel::send_locked(const nlohmann::json& message) {
  const auto frame = encode_frame(message);
  size_t sent = 0;
  while (sent < frame.size()) {
    const ssize_t n = ::send(fd_, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      Error failed = errno_error("send", errno, "control frame to " + peer_name_);
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        failed.code = ErrorCode::kTimeout;
        failed.message = peer_name_ +
                         " stopped reading: a control frame could not be sent "
                         "within the send timeout (" +
                         std::to_string(sent) + " of " + std::to_string(frame.size()) +
                         " bytes went)";
      }
      return failed;
    }
    sent += static_cast<size_t>(n);
  }
  return {};
}

Result<nlohmann::json> Channel::receive(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto frame = decoder_.next();
    if (!frame.ok()) return std::move(frame).take_error();
    if (frame.value()) return std::move(*frame.value());

    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return Error{ErrorCode::kTimeout, "no message from " + peer_name_ + " within " +
                                            std::to_string(timeout.count()) + " ms"};
    }
    pollfd ready{fd_, POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(left.count()));
    if (polled < 0) {
      if (errno == EINTR) continue;
      return errno_error("poll", errno, "control channel to " + peer_name_);
    }
    if (polled == 0) continue;
    std::byte chunk[8192];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return errno_error("recv", errno, "control channel to " + peer_name_);
    }
    if (n == 0) {
      Error error{ErrorCode::kIoError, peer_name_ + " closed the connection"};
      if (decoder_.pending() > 0) {
        error.message += " in the middle of a frame (" + std::to_string(decoder_.pending()) +
                         " bytes of a truncated frame)";
      }
      return error;
    }
    decoder_.feed(chunk, static_cast<size_t>(n));
  }
}

void Channel::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

}  // namespace faultline::harness::control
