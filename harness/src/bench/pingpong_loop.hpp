#pragma once

// The ping-pong's two halves, shared by its one-process (a thread each) and two-process forms.
#include <cstdint>
#include <vector>

#include "bench_pair.hpp"
#include "faultline/harness/bench/pingpong.hpp"
#include "faultline/harness/control/channel.hpp"

namespace faultline::harness::bench {

/// Receives each side keeps posted ahead of the peer's messages.
inline constexpr uint32_t kReceivesAhead = 16;

/// The first byte of the initiator's last message of a --duration run (the others start with
/// 0: the buffers are zeroed and nothing else writes them).
inline constexpr std::byte kLastMessage{0xFF};

/// What every message of one size is.
struct Exchange {
  transports::Opcode op = transports::Opcode::kSend;
  size_t bytes = 0;
  bool inline_data = false;
  bool repost = true;  ///< the message consumed a posted receive
};

/// What each size of `options` exchanges, the same on both sides.
std::vector<Exchange> exchanges_of(const PingpongOptions& options,
                                   const transports::DeviceInfo& info);
/// The endpoints and buffers a ping-pong of `options` needs.
BenchPairOptions pair_options(const PingpongOptions& options);

/// The responder's part of one size: answers every message (warm-up and iterations, or until
/// the last one with --duration), then drives its sends home.
Status respond(BenchSide& server, const BenchSide& client, const Exchange& exchange,
               const PingpongOptions& options);
/// The initiator's part of one size: every round trip after the warm-up, in microseconds
/// (`iterations` of them, or as many as fit `duration_seconds`).
Result<std::vector<double>> initiate(BenchSide& client, const BenchSide& server,
                                     const Exchange& exchange, const PingpongOptions& options);
/// One row from the round trips (each halved).
LatencyRow summarize(size_t bytes, std::vector<double> round_trips);

/// The responder in a forked process of its own (send/recv only).
Result<std::vector<LatencyRow>> run_pingpong_in_two_processes(const PingpongOptions& options);

/// The two halves in processes of their own (forked, or on two nodes), talking over `peer`:
/// endpoint addresses swapped, then every size; the responder says at the end how it went.
Status serve_responder(const PingpongOptions& options, control::Channel& initiator);
Result<std::vector<LatencyRow>> run_initiator(const PingpongOptions& options,
                                              control::Channel& responder);

}  // namespace faultline::harness::bench
