// `bench pingpong --two-processes`: the responder forked into a process of its own, as
// fi_pingpong's server is, so the comparison with fi_pingpong measures the same structure.
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "faultline/core/hex.hpp"
#include "faultline/harness/control/channel.hpp"
#include "pingpong_loop.hpp"

namespace faultline::harness::bench {

namespace {

using namespace std::chrono_literals;

// One side in this process: opened, endpoint addresses swapped over `peer`, connected,
// receives posted. A peer that says it failed instead (a server refusing the options) ends it.
Result<std::unique_ptr<BenchEnd>> open_connected_end(const PingpongOptions& options,
                                                     control::Channel& peer) {
  auto opened = open_bench_end(pair_options(options));
  if (!opened.ok()) return opened.error();
  auto end = std::move(opened).value();
  FAULTLINE_RETURN_IF_ERROR(peer.send({{"address", to_hex(end->endpoint->address())}}));
  auto said = peer.receive(30s);
  if (!said.ok()) return said.error();
  if (const std::string error = said->value("error", ""); !error.empty())
    return Error{ErrorCode::kInternal, "the " + peer.peer_name() + ": " + error};
  FAULTLINE_RETURN_IF_ERROR(end->endpoint->connect(from_hex(said->value("address", ""))));
  for (uint32_t i = 0; i < kReceivesAhead; ++i) FAULTLINE_RETURN_IF_ERROR(end->side.post_receive());
  return end;
}

// The responder process: answers every size, then exits as it went.
[[noreturn]] void serve_in_child(const PingpongOptions& options, int fd) {
  control::Channel initiator(fd, "benchmark's initiator process");
  _exit(serve_responder(options, initiator).ok() ? 0 : 1);
}

}  // namespace

Status serve_responder(const PingpongOptions& options, control::Channel& initiator) {
  Status status = [&]() -> Status {
    auto end = open_connected_end(options, initiator);
    if (!end.ok()) return end.error();
    const BenchSide no_peer;  // send/recv needs nothing of the peer's buffers
    for (const Exchange& exchange : exchanges_of(options, end.value()->device->info()))
      FAULTLINE_RETURN_IF_ERROR(respond(end.value()->side, no_peer, exchange, options));
    return {};
  }();
  // How it went (no error: fine), for the initiator to report.
  (void)initiator.send({{"error", status.ok() ? "" : status.error().describe()}});
  return status;
}

Result<std::vector<LatencyRow>> run_initiator(const PingpongOptions& options,
                                              control::Channel& responder) {
  auto end = open_connected_end(options, responder);
  if (!end.ok()) return end.error();
  const BenchSide no_peer;
  std::vector<LatencyRow> rows;
  for (const Exchange& exchange : exchanges_of(options, end.value()->device->info())) {
    auto round_trips = initiate(end.value()->side, no_peer, exchange, options);
    if (!round_trips.ok()) return round_trips.error();
    rows.push_back(summarize(exchange.bytes, std::move(round_trips).value()));
  }
  auto said = responder.receive(kBenchStall);
  if (!said.ok()) return said.error();
  if (const std::string error = said->value("error", ""); !error.empty())
    return Error{ErrorCode::kInternal, "the " + responder.peer_name() + ": " + error};
  return rows;
}

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
    serve_in_child(options, fds[1]);
  }
  ::close(fds[1]);
  control::Channel peer(fds[0], "benchmark's responder process");
  auto rows = run_initiator(options, peer);
  // The responder is reaped however this ended; killed first unless the run went through.
  if (!rows.ok()) ::kill(responder, SIGKILL);
  int status = 0;
  ::waitpid(responder, &status, 0);
  return rows;
}

}  // namespace faultline::harness::bench
