#include "faultline/harness/bench/bandwidth.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "bench_pair.hpp"

namespace faultline::harness::bench {

using transports::Opcode;
using Clock = std::chrono::steady_clock;

namespace {

// Keeps `window` messages outstanding until `count` were posted, then waits for the rest.
Status stream(BenchSide& sender, const BenchSide& receiver, Opcode op, size_t bytes, uint64_t count,
              uint32_t window) {
  uint64_t posted = 0;
  auto stall = Clock::now() + kBenchStall;
  while (posted < count) {
    while (sender.signaled_sends_outstanding < window && posted < count) {
      FAULTLINE_RETURN_IF_ERROR(sender.post_message(receiver, op, bytes, false, true));
      ++posted;
      stall = Clock::now() + kBenchStall;
    }
    FAULTLINE_RETURN_IF_ERROR(sender.poll_once());
    if (Clock::now() > stall)
      return Error{ErrorCode::kTimeout, "no benchmark send completed within 10 s"};
  }
  return sender.finish_sends();
}

// The receiver's side: reposts every receive a send used. For writes it drives progress
// where a software provider moves the data only while the target polls (libfabric), and
// otherwise stays out of the device's way as perftest's passive side does (a spinning
// thread takes a CPU that rxe's kernel work needs).
void receive(BenchSide& receiver, bool sends, bool target_polls, uint32_t depth,
             const std::atomic<bool>& done, Status& status) {
  if (!sends && !target_polls) {
    while (!done.load(std::memory_order_relaxed))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return;
  }
  while (!done.load(std::memory_order_relaxed) && status.ok()) {
    status = receiver.poll_once();
    while (sends && status.ok() && receiver.receives_posted - receiver.receives_completed < depth)
      status = receiver.post_receive();
  }
}

}  // namespace

Result<std::vector<BandwidthRow>> run_bandwidth(const BandwidthOptions& options) {
  if (options.op != "send" && options.op != "write")
    return Error{ErrorCode::kInvalidArgument, "op " + options.op + ": expected write or send"};
  if (options.sizes.empty() || options.iterations == 0 || options.window == 0)
    return Error{ErrorCode::kInvalidArgument, "nothing to measure: no sizes, iterations or window"};
  const size_t largest = *std::max_element(options.sizes.begin(), options.sizes.end());
  const bool sends = options.op == "send";
  auto opened = open_bench_pair({.target = options.target,
                                 .buffer_bytes = std::max<size_t>(largest, 1),
                                 .send_depth = options.window,
                                 .recv_depth = sends ? options.window * 2 : 1,
                                 .idle_decorator = options.idle_decorator});
  if (!opened.ok()) return opened.error();
  BenchPair pair = std::move(opened).value();
  const auto& info = pair.info();
  if (!sends && !info.capabilities.rdma_write)
    return Error{ErrorCode::kUnsupported,
                 info.transport + "/" + info.provider + " has no RDMA write"};
  const Opcode op = sends ? Opcode::kSend : Opcode::kRdmaWrite;

  std::vector<BandwidthRow> rows;
  for (size_t size : options.sizes) {
    std::atomic<bool> done{false};
    Status receiver_status;
    while (sends && pair.server->receives_posted - pair.server->receives_completed <
                        uint64_t{options.window} * 2)
      FAULTLINE_RETURN_IF_ERROR(pair.server->post_receive());
    std::thread receiver([&] {
      receive(*pair.server, sends, info.transport != "verbs", options.window * 2, done,
              receiver_status);
    });
    Status sender_status =
        stream(*pair.client, *pair.server, op, size, options.warmup, options.window);
    const auto started = Clock::now();
    if (sender_status.ok())
      sender_status =
          stream(*pair.client, *pair.server, op, size, options.iterations, options.window);
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    done = true;
    receiver.join();
    FAULTLINE_RETURN_IF_ERROR(std::move(sender_status));
    FAULTLINE_RETURN_IF_ERROR(std::move(receiver_status));
    const double moved = static_cast<double>(size) * static_cast<double>(options.iterations);
    rows.push_back({size, options.iterations, moved / seconds / (1024.0 * 1024.0),
                    static_cast<double>(options.iterations) / seconds});
  }
  return rows;
}

}  // namespace faultline::harness::bench
