#include "faultline/harness/bench/pingpong.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>

#include "pingpong_loop.hpp"
#include "statistics.hpp"

namespace faultline::harness::bench {

using transports::Opcode;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint64_t kSignalEvery = 16;

// One message to the peer; an inline one is signaled only every kSignalEvery-th time.
Status send_one(BenchSide& side, const BenchSide& peer, const Exchange& exchange, uint64_t i) {
  const bool signaled = !exchange.inline_data || i % kSignalEvery == kSignalEvery - 1;
  return side.post_message(peer, exchange.op, exchange.bytes, exchange.inline_data, signaled);
}

// Spins until the peer's next message arrived, then gives back the receive it used.
Status wait_for_message(BenchSide& side, const Exchange& exchange) {
  const uint64_t expected = side.receives_completed + 1;
  const auto stall = Clock::now() + kBenchStall;
  for (uint64_t spins = 1; side.receives_completed < expected; ++spins) {
    FAULTLINE_RETURN_IF_ERROR(side.poll_once());
    if (spins % 1024 == 0 && Clock::now() > stall)  // the clock is not free: look seldom
      return Error{ErrorCode::kTimeout, "no ping-pong message within 10 s"};
  }
  return exchange.repost ? side.post_receive() : Status{};
}

Result<LatencyRow> measure_size(BenchPair& pair, const Exchange& exchange,
                                const PingpongOptions& options) {
  Status server_status;
  std::thread responder(
      [&] { server_status = respond(*pair.server, *pair.client, exchange, options); });
  auto round_trips = initiate(*pair.client, *pair.server, exchange, options);
  responder.join();
  if (!round_trips.ok()) return round_trips.error();
  FAULTLINE_RETURN_IF_ERROR(std::move(server_status));
  return summarize(exchange.bytes, std::move(round_trips).value());
}

}  // namespace

LatencyRow summarize(size_t bytes, std::vector<double> round_trips) {
  LatencyRow row;
  row.bytes = bytes;
  row.iterations = round_trips.size();
  row.min_us = *std::min_element(round_trips.begin(), round_trips.end()) / 2;
  row.mean_us = std::accumulate(round_trips.begin(), round_trips.end(), 0.0) /
                static_cast<double>(round_trips.size()) / 2;
  row.median_us = percentile(round_trips, 0.5) / 2;
  row.p99_us = percentile(round_trips, 0.99) / 2;
  row.p999_us = percentile(round_trips, 0.999) / 2;
  row.max_us = *std::max_element(round_trips.begin(), round_trips.end()) / 2;
  row.stdev_us = standard_deviation(round_trips) / 2;
  return row;
}

Status respond(BenchSide& server, const BenchSide& client, const Exchange& exchange,
               const PingpongOptions& options) {
  // With --duration the initiator alone knows when to stop: its last message says so.
  const bool until_last = options.duration_seconds.has_value();
  const uint64_t total = options.warmup + options.iterations;
  for (uint64_t i = 0; until_last || i < total; ++i) {
    FAULTLINE_RETURN_IF_ERROR(wait_for_message(server, exchange));
    const bool last = until_last && server.rx->data()[0] == kLastMessage;
    FAULTLINE_RETURN_IF_ERROR(send_one(server, client, exchange, i));
    if (last) break;
  }
  return server.finish_sends();
}

Result<std::vector<double>> initiate(BenchSide& client, const BenchSide& server,
                                     const Exchange& exchange, const PingpongOptions& options) {
  std::vector<double> round_trips;
  round_trips.reserve(options.duration_seconds ? 1 << 16 : options.iterations);
  const auto duration = std::chrono::duration<double>(options.duration_seconds.value_or(0));
  Clock::time_point measuring_since;
  for (uint64_t i = 0;; ++i) {
    const bool measuring = i >= options.warmup;
    const auto started = Clock::now();
    if (i == options.warmup) measuring_since = started;
    const bool last = options.duration_seconds ? measuring && started - measuring_since >= duration
                                               : i + 1 == options.warmup + options.iterations;
    if (last && options.duration_seconds) client.tx->data()[0] = kLastMessage;
    FAULTLINE_RETURN_IF_ERROR(send_one(client, server, exchange, i));
    FAULTLINE_RETURN_IF_ERROR(wait_for_message(client, exchange));
    const auto finished = Clock::now();
    if (measuring)
      round_trips.push_back(std::chrono::duration<double, std::micro>(finished - started).count());
    if (last) break;
  }
  client.tx->data()[0] = std::byte{0};
  FAULTLINE_RETURN_IF_ERROR(client.finish_sends());
  return round_trips;
}

std::vector<Exchange> exchanges_of(const PingpongOptions& options,
                                   const transports::DeviceInfo& info) {
  const bool write = options.op == "write";
  std::vector<Exchange> exchanges;
  for (size_t size : options.sizes)
    exchanges.push_back({.op = write ? Opcode::kRdmaWriteWithImm : Opcode::kSend,
                         .bytes = size,
                         .inline_data = size <= std::min(info.limits.max_inline_data,
                                                         options.max_inline.value_or(UINT32_MAX)),
                         .repost = !write || info.capabilities.write_imm_consumes_recv});
  return exchanges;
}

BenchPairOptions pair_options(const PingpongOptions& options) {
  const size_t largest = *std::max_element(options.sizes.begin(), options.sizes.end());
  return {.target = options.target,
          .buffer_bytes = std::max<size_t>(largest, 1),
          .send_depth = 64,
          .recv_depth = kReceivesAhead * 2,
          .idle_decorator = options.idle_decorator,
          .gid_index = options.gid_index};
}

Result<std::vector<LatencyRow>> run_pingpong(const PingpongOptions& options) {
  if (options.op != "send" && options.op != "write")
    return Error{ErrorCode::kInvalidArgument, "op " + options.op + ": expected send or write"};
  if (options.sizes.empty() || options.iterations == 0)
    return Error{ErrorCode::kInvalidArgument, "nothing to measure: no sizes or iterations"};
  if (options.duration_seconds &&
      std::find(options.sizes.begin(), options.sizes.end(), 0) != options.sizes.end())
    return Error{ErrorCode::kInvalidArgument,
                 "--duration needs sizes of at least 1 byte (the last message is marked)"};
  if (options.two_processes) {
    if (options.op != "send")
      return Error{ErrorCode::kInvalidArgument,
                   "--two-processes measures send/recv only (--op send)"};
    return run_pingpong_in_two_processes(options);
  }
  auto opened = open_bench_pair(pair_options(options));
  if (!opened.ok()) return opened.error();
  BenchPair pair = std::move(opened).value();
  const auto& info = pair.info();
  const bool write = options.op == "write";
  if (write && !info.capabilities.write_with_imm)
    return Error{ErrorCode::kUnsupported,
                 info.transport + "/" + info.provider + " has no RDMA write with immediate"};
  for (BenchSide* side : {pair.client.get(), pair.server.get()})
    for (uint32_t i = 0; i < kReceivesAhead; ++i) FAULTLINE_RETURN_IF_ERROR(side->post_receive());

  std::vector<LatencyRow> rows;
  for (const Exchange& exchange : exchanges_of(options, info)) {
    auto row = measure_size(pair, exchange, options);
    if (!row.ok()) return row.error();
    rows.push_back(row.value());
  }
  return rows;
}

}  // namespace faultline::harness::bench
