// `bench pingpong --two-processes`: the responder forked into a process of its own, as
// fi_pingpong's server is, so the comparison with fi_pingpong measures the same structure.
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <span>
#include <string>

#include "pingpong_loop.hpp"

namespace faultline::harness::bench {

namespace {

// A length and its bytes over a local socket, for what the two processes tell each other.
bool send_blob(int fd, std::span<const std::byte> blob) {
  const auto length = static_cast<uint32_t>(blob.size());
  return ::write(fd, &length, sizeof length) == sizeof length &&
         ::write(fd, blob.data(), blob.size()) == static_cast<ssize_t>(blob.size());
}

std::optional<std::vector<std::byte>> receive_blob(int fd) {
  uint32_t length = 0;
  if (::read(fd, &length, sizeof length) != sizeof length) return std::nullopt;
  std::vector<std::byte> blob(length);
  size_t got = 0;
  while (got < length) {
    const ssize_t n = ::read(fd, blob.data() + got, length - got);
    if (n <= 0) return std::nullopt;
    got += static_cast<size_t>(n);
  }
  return blob;
}

// One side in this process: opened, addresses swapped over `fd`, connected, receives posted.
Result<std::unique_ptr<BenchEnd>> open_connected_end(const PingpongOptions& options, int fd) {
  auto opened = open_bench_end(pair_options(options));
  if (!opened.ok()) return opened.error();
  auto end = std::move(opened).value();
  if (!send_blob(fd, end->endpoint->address()))
    return errno_error("write", errno, "the endpoint address to the other benchmark process");
  auto peer = receive_blob(fd);
  if (!peer)
    return Error{ErrorCode::kInternal,
                 "the other benchmark process ended before it said its "
                 "endpoint address"};
  FAULTLINE_RETURN_IF_ERROR(end->endpoint->connect(*peer));
  for (uint32_t i = 0; i < kReceivesAhead; ++i) FAULTLINE_RETURN_IF_ERROR(end->side.post_receive());
  return end;
}

// The responder process: answers every size, then says how it went (empty: fine).
[[noreturn]] void serve_as_responder(const PingpongOptions& options, int fd) {
  Status status = [&]() -> Status {
    auto end = open_connected_end(options, fd);
    if (!end.ok()) return end.error();
    const BenchSide no_peer;  // send/recv needs nothing of the peer's buffers
    for (const Exchange& exchange : exchanges_of(options, end.value()->device->info()))
      FAULTLINE_RETURN_IF_ERROR(
          respond(end.value()->side, no_peer, exchange, options.warmup + options.iterations));
    return {};
  }();
  const std::string said = status.ok() ? "" : status.error().describe();
  (void)send_blob(fd, std::as_bytes(std::span(said)));
  _exit(status.ok() ? 0 : 1);
}

}  // namespace

// Both sides in processes of their own, as fi_pingpong's client and server are: this process
// initiates, a forked one responds; they swap endpoint addresses over a socket pair.
Result<std::vector<LatencyRow>> run_pingpong_in_two_processes(const PingpongOptions& options) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return errno_error("socketpair", errno, "for the benchmark's second process");
  const pid_t responder = ::fork();
  if (responder < 0) return errno_error("fork", errno, "the benchmark's responder process");
  if (responder == 0) {
    ::close(fds[0]);
    serve_as_responder(options, fds[1]);
  }
  ::close(fds[1]);
  // The responder is reaped however this ends; killed first unless it said how it went.
  struct Reap {
    pid_t pid;
    int fd;
    bool heard = false;
    ~Reap() {
      ::close(fd);
      if (!heard) ::kill(pid, SIGKILL);
      int status = 0;
      ::waitpid(pid, &status, 0);
    }
  } reap{responder, fds[0]};
  auto end = open_connected_end(options, fds[0]);
  if (!end.ok()) return end.error();
  const BenchSide no_peer;
  std::vector<LatencyRow> rows;
  for (const Exchange& exchange : exchanges_of(options, end.value()->device->info())) {
    auto round_trips = initiate(end.value()->side, no_peer, exchange, options);
    if (!round_trips.ok()) return round_trips.error();
    rows.push_back(summarize(exchange.bytes, std::move(round_trips).value()));
  }
  auto said = receive_blob(fds[0]);
  reap.heard = said.has_value();
  if (!said) return Error{ErrorCode::kInternal, "the responder process ended without a word"};
  if (!said->empty())
    return Error{ErrorCode::kInternal,
                 "the responder process: " +
                     std::string(reinterpret_cast<const char*>(said->data()), said->size())};
  return rows;
}

}  // namespace faultline::harness::bench
