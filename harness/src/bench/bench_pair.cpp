#include "bench_pair.hpp"

#include <chrono>

#include "faultline/transports/fault/fault_device.hpp"

namespace faultline::harness::bench {

using transports::Completion;
using transports::Opcode;

namespace {

Result<std::unique_ptr<transports::Device>> open_device(const BenchPairOptions& options) {
  auto device = open_target_device(options.target);
  if (!device.ok() || !options.idle_decorator) return device;
  // A rewrite of the first RDMA read completion: the benchmarks post none, so it never
  // fires, but every post and poll goes through the decorator.
  transports::fault::FaultSpec rewrite;
  rewrite.opcode = Opcode::kRdmaRead;
  rewrite.when.nth = 1;
  transports::fault::FaultPlan plan{0, {rewrite}};
  return transports::fault::wrap_device(std::move(device).value(), std::move(plan),
                                        std::make_shared<transports::fault::FaultLog>());
}

transports::EndpointConfig endpoint_config(const BenchPairOptions& options,
                                           const transports::DeviceInfo& info) {
  transports::EndpointConfig config;
  config.send_depth = options.send_depth;
  config.recv_depth = options.recv_depth;
  config.max_inline = info.limits.max_inline_data;
  if (options.gid_index) config.gid = std::to_string(*options.gid_index);  // perftest -x
  return config;
}

// Every message of a run fits the buffers, so the largest is what the device must take.
Status check_buffer_size(const BenchPairOptions& options, const transports::DeviceInfo& info) {
  if (const uint64_t most = info.limits.max_msg_size; options.buffer_bytes > most)
    return Error{ErrorCode::kLimitExceeded, "size " + std::to_string(options.buffer_bytes) +
                                                " exceeds max_msg_size " + std::to_string(most)};
  return {};
}

}  // namespace

Status BenchSide::post_receive() {
  const transports::Segment into = rx->whole();
  FAULTLINE_RETURN_IF_ERROR(endpoint->post_recv({receives_posted++, {&into, 1}}));
  return {};
}

Status BenchSide::post_message(const BenchSide& peer, Opcode op, size_t length, bool inline_data,
                               bool signaled) {
  const transports::Segment from = tx->segment(0, length);
  transports::WorkRequest request{.wr_id = 1,
                                  .op = op,
                                  .segments = {&from, 1},
                                  .inline_data = inline_data,
                                  .signaled = signaled};
  if (op == Opcode::kSendWithImm || op == Opcode::kRdmaWriteWithImm) request.imm = 1;
  if (op == Opcode::kRdmaWrite || op == Opcode::kRdmaWriteWithImm)
    request.remote = peer.rx->region->remote(0, length);
  FAULTLINE_RETURN_IF_ERROR(endpoint->post_send(request));
  if (signaled) ++signaled_sends_outstanding;
  return {};
}

Status BenchSide::poll_once() {
  auto count = endpoint->poll(polled, std::chrono::milliseconds(0));
  if (!count.ok()) return count.error();
  std::span<const Completion> got(polled.data(), count.value());
  for (size_t i = 0; i < got.size(); ++i) {
    if (!got[i].ok())
      return Error{ErrorCode::kNativeError, "benchmark completion " + got[i].describe()};
    if (got[i].op == Opcode::kRecv || got[i].op == Opcode::kRecvRdmaWithImm) {
      ++receives_completed;
    } else {
      --signaled_sends_outstanding;
    }
  }
  return {};
}

Status BenchSide::finish_sends() {
  const auto stall = std::chrono::steady_clock::now() + kBenchStall;
  while (signaled_sends_outstanding > 0) {
    FAULTLINE_RETURN_IF_ERROR(poll_once());
    if (std::chrono::steady_clock::now() > stall)
      return Error{ErrorCode::kTimeout, std::to_string(signaled_sends_outstanding) +
                                            " benchmark sends did not complete within 10 s"};
  }
  return {};
}

Result<std::unique_ptr<BenchEnd>> open_bench_end(const BenchPairOptions& options) {
  auto end = std::make_unique<BenchEnd>();
  auto device = open_device(options);
  if (!device.ok()) return device.error();
  end->device = std::move(device).value();
  const auto& info = end->device->info();
  FAULTLINE_RETURN_IF_ERROR(check_buffer_size(options, info));
  for (auto* buffer : {&end->tx, &end->rx}) {
    auto registered = transports::RegisteredBuffer::allocate(
        *end->device, std::max<size_t>(options.buffer_bytes, 1));
    if (!registered.ok()) return registered.error();
    *buffer = std::make_unique<transports::RegisteredBuffer>(std::move(registered).value());
  }
  auto endpoint = end->device->create_endpoint(endpoint_config(options, info));
  if (!endpoint.ok()) return endpoint.error();
  end->endpoint = std::move(endpoint).value();
  end->side.endpoint = end->endpoint.get();
  end->side.tx = end->tx.get();
  end->side.rx = end->rx.get();
  return end;
}

Result<BenchPair> open_bench_pair(const BenchPairOptions& options) {
  auto local = transports::LocalPair::open(
      [&options] { return open_device(options); },
      [&options](const transports::DeviceInfo& info) { return endpoint_config(options, info); });
  if (!local.ok()) return local.error();
  BenchPair pair{std::move(local).value(), std::make_unique<BenchSide>(),
                 std::make_unique<BenchSide>()};
  FAULTLINE_RETURN_IF_ERROR(check_buffer_size(options, pair.info()));
  for (auto [side, end] : {std::pair{pair.client.get(), transports::LocalPair::kA},
                           std::pair{pair.server.get(), transports::LocalPair::kB}}) {
    side->endpoint = &pair.local->endpoint(end);
    for (auto* buffer : {&side->tx, &side->rx}) {
      auto registered = pair.local->buffer(end, options.buffer_bytes);
      if (!registered.ok()) return registered.error();
      *buffer = registered.value();
    }
  }
  return pair;
}

}  // namespace faultline::harness::bench
