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
  if (!plan.ok()) return std::move(plan).take_error();
  if (plan->empty()) return device;
  for (auto& fault : plan->faults) fault.caps.source = "the injected limits (--inject)";
  return transports::fault::wrap_device(std::move(device).value(), std::move(plan).value(),
                                        std::make_shared<transports::fault::FaultLog>());
}

Result<transports::DeviceInfo> ProbeContext::device_info() const {
  auto device = open();
  if (!device.ok()) return device.error();
  return device.value()->info();
}

Result<std::unique_ptr<ProbePair>> open_probe_pair(const ProbeContext& context,
                                                   const transports::EndpointConfig& config) {
  return ProbePair::open([&context] { return context.open(); }, config, config);
}

Result<Completion> next_completion(ProbePair& pair, ProbePair::Side side,
                                   std::chrono::milliseconds timeout,
                                   const std::string& waiting_for) {
  auto next = pair.next(side, timeout);
  if (!next.ok()) return std::move(next).take_error();
  if (!next.value()) {
    return Error{ErrorCode::kTimeout, "no completion for " + waiting_for + " within " +
                                          std::to_string(timeout.count()) + " ms"}
        .with_hint(
            "the operation never completed: a lost completion, a peer that never "
            "received, or a provider that needs progress");
  }
  return *next.value();
}

Status send_checked(ProbePair& pair, size_t length, bool inline_data,
                    std::span<const size_t> segment_lengths) {
  auto tx = pair.buffer(ProbePair::kA, length);
  if (!tx.ok()) return tx.error();
  auto rx = pair.buffer(ProbePair::kB, length);
  if (!rx.ok()) return rx.error();
  transports::fill_pattern(tx.value()->data(), length, kPatternSeed);
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
    auto completion = next_completion(pair, side, kCompletionTimeout,
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
  const size_t wrong = transports::first_pattern_mismatch(rx.value()->data(), length, kPatternSeed);
  if (wrong != length) {
    return Error{ErrorCode::kProtocolViolation,
                 "received data differs from what was sent at byte " + std::to_string(wrong) +
                     " of " + std::to_string(length)}
        .with_hint("the payload was corrupted, truncated or placed at the wrong offset");
  }
  return {};
}

}  // namespace faultline::harness::diagnose
