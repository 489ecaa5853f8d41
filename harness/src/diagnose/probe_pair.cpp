#include "probe_pair.hpp"

#include "faultline/harness/scenario/scenario_runner.hpp"
#include "faultline/transports/data_pattern.hpp"
#include "faultline/transports/fault/fault_device.hpp"

namespace faultline::harness::diagnose {

using transports::Completion;

namespace {

constexpr unsigned kPatternSeed = 0x5eed;
constexpr auto kCompletionTimeout = std::chrono::seconds(5);

}  // namespace

Result<std::unique_ptr<transports::Device>> ProbeContext::open() const {
  auto device = open_target_device(target);
  if (!device.ok() || inject_faults.empty()) return device;
  nlohmann::json faults = nlohmann::json::array();
  for (auto fault : inject_faults) {
    fault["role"] = "probe";
    faults.push_back(std::move(fault));
  }
  auto plan = fault_plan_for({{"faults", faults}}, "probe", 1);
  if (plan.empty()) return device;
  plan.limits_source = "the injected limits (--inject)";
  return transports::fault::wrap_device(std::move(device).value(), std::move(plan),
                                        std::make_shared<transports::fault::FaultLog>());
}

Result<transports::DeviceInfo> ProbeContext::device_info() const {
  auto device = open();
  if (!device.ok()) return device.error();
  return device.value()->info();
}

Result<std::unique_ptr<ProbePair>> ProbePair::open(const ProbeContext& context,
                                                   const transports::EndpointConfig& config) {
  auto pair = std::make_unique<ProbePair>();
  for (auto* device : {&pair->device_a_, &pair->device_b_}) {
    auto opened = context.open();
    if (!opened.ok()) return opened.error();
    *device = std::move(opened).value();
  }
  auto a = pair->device_a_->create_endpoint(config);
  if (!a.ok()) return a.error();
  pair->a_ = std::move(a).value();
  auto b = pair->device_b_->create_endpoint(config);
  if (!b.ok()) return b.error();
  pair->b_ = std::move(b).value();
  if (Status connected = pair->a_->connect(pair->b_->address()); !connected.ok())
    return std::move(connected).take_error();
  if (Status connected = pair->b_->connect(pair->a_->address()); !connected.ok())
    return std::move(connected).take_error();
  return pair;
}

ProbePair::~ProbePair() {
  a_.reset();
  b_.reset();
  buffers_.clear();
}

Result<ProbeBuffer*> ProbePair::buffer(Side side, size_t length) {
  auto buffer = std::make_unique<ProbeBuffer>();
  buffer->bytes.resize(std::max<size_t>(length, 1));
  auto region = device(side).register_memory(buffer->bytes.data(), buffer->bytes.size(),
                                             transports::kAccessAll);
  if (!region.ok()) return region.error();
  buffer->region = std::move(region).value();
  buffers_.push_back(std::move(buffer));
  return buffers_.back().get();
}

Result<Completion> ProbePair::next(Side side, std::chrono::milliseconds timeout,
                                   const std::string& waiting_for) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const Side other = side == kA ? kB : kA;
  while (backlog_[side].empty()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return Error{ErrorCode::kTimeout, "no completion for " + waiting_for + " within " +
                                            std::to_string(timeout.count()) + " ms"}
          .with_hint(
              "the operation never completed: a lost completion, a peer that never "
              "received, or a provider that needs progress");
    }
    Completion got[8];
    for (Side polled : {side, other}) {
      auto count = endpoint(polled).poll(got, std::chrono::milliseconds(polled == side ? 1 : 0));
      if (!count.ok()) return count.error();
      for (size_t i = 0; i < count.value(); ++i) backlog_[polled].push_back(got[i]);
    }
  }
  Completion completion = backlog_[side].front();
  backlog_[side].pop_front();
  return completion;
}

Status send_checked(ProbePair& pair, size_t length, bool inline_data,
                    std::span<const size_t> segment_lengths) {
  auto tx = pair.buffer(ProbePair::kA, length);
  if (!tx.ok()) return tx.error();
  auto rx = pair.buffer(ProbePair::kB, length);
  if (!rx.ok()) return rx.error();
  transports::fill_pattern(tx.value()->bytes.data(), length, kPatternSeed);
  transports::Segment into = rx.value()->segment(0, length);
  if (Status posted = pair.endpoint(ProbePair::kB).post_recv({1, {&into, 1}}); !posted.ok())
    return posted;
  std::vector<transports::Segment> from;
  size_t offset = 0;
  for (size_t piece : segment_lengths) {
    from.push_back(tx.value()->segment(offset, piece));
    offset += piece;
  }
  if (from.empty()) from.push_back(tx.value()->segment(0, length));
  if (Status posted = pair.endpoint(ProbePair::kA)
                          .post_send({.wr_id = 1,
                                      .op = transports::Opcode::kSend,
                                      .segments = from,
                                      .inline_data = inline_data});
      !posted.ok()) {
    return posted;
  }
  for (auto side : {ProbePair::kA, ProbePair::kB}) {
    auto completion = pair.next(side, kCompletionTimeout,
                                side == ProbePair::kA ? "the SEND" : "the matching RECV");
    if (!completion.ok()) return completion.error();
    if (!completion->ok()) {
      return Error{ErrorCode::kNativeError, "completion " + completion->describe()}.with_hint(
          "the device rejected the transfer; the status and native code say why");
    }
    if (side == ProbePair::kB && completion->byte_len != length) {
      return Error{ErrorCode::kProtocolViolation, "RECV byte_len " +
                                                      std::to_string(completion->byte_len) +
                                                      ", sent " + std::to_string(length)};
    }
  }
  const size_t wrong =
      transports::first_pattern_mismatch(rx.value()->bytes.data(), length, kPatternSeed);
  if (wrong != length) {
    return Error{ErrorCode::kProtocolViolation,
                 "received data differs from what was sent at byte " + std::to_string(wrong) +
                     " of " + std::to_string(length)}
        .with_hint("the payload was corrupted, truncated or placed at the wrong offset");
  }
  return {};
}

}  // namespace faultline::harness::diagnose
