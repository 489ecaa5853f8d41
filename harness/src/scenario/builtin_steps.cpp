#include "builtin_steps.hpp"

#include <thread>

namespace faultline::harness {

using namespace transports;

namespace {

// One completion, polled here rather than inside the transport so `watcher` hears of every
// empty poll; spins a millisecond, then eases off with short sleeps, as the transports do.
Result<size_t> poll_watched(Endpoint& endpoint, Completion& completion,
                            std::chrono::milliseconds timeout, PollWatcher& watcher) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  Result<size_t> polled = size_t{0};
  for (;;) {
    polled = endpoint.poll({&completion, 1}, std::chrono::milliseconds{0});
    if (!polled.ok() || polled.value() > 0) break;
    watcher.polled_empty();
    const auto now = Clock::now();
    if (now - start >= timeout) break;
    if (now - start > std::chrono::milliseconds{1})
      std::this_thread::sleep_for(std::chrono::microseconds{50});
  }
  watcher.wait_ended();
  return polled;
}

}  // namespace

ScenarioOutcome harness_error(const Error& error) {
  return {Verdict::kError, "", "", error.describe(), error.hint};
}

ScenarioOutcome failure(std::string expected, std::string observed, std::string evidence,
                        std::string hint) {
  return {Verdict::kFail, std::move(expected), std::move(observed), std::move(evidence),
          std::move(hint)};
}

Result<transports::RegisteredBuffer> make_buffer(Device& device, size_t length) {
  return transports::RegisteredBuffer::allocate(device, length, kAccessAll);
}

std::optional<ScenarioOutcome> expect_completion(Endpoint& endpoint, FirstContact& first, Opcode op,
                                                 uint32_t byte_len,
                                                 std::chrono::milliseconds timeout,
                                                 PollWatcher* watcher) {
  Completion completion;
  auto polled = watcher ? poll_watched(endpoint, completion, timeout, *watcher)
                        : endpoint.poll({&completion, 1}, timeout);
  if (!polled.ok()) return harness_error(polled.error());
  const std::string expected =
      std::string(to_string(op)) + " SUCCESS" +
      (op == Opcode::kRecv ? " of " + std::to_string(byte_len) + " bytes" : "");
  if (polled.value() == 0) {
    return failure(expected,
                   "no completion within " + std::to_string(timeout.count()) + " ms" + first.note(),
                   "", first.hint());
  }
  if (!completion.ok()) {
    return failure(expected,
                   std::string(to_string(completion.op)) + " " +
                       std::string(to_string(completion.status)) + first.note(),
                   completion.describe(), first.hint());
  }
  first.reached();
  if (completion.op != op || (op == Opcode::kRecv && completion.byte_len != byte_len)) {
    return failure(
        expected,
        std::string(to_string(completion.op)) + " " + std::string(to_string(completion.status)),
        completion.describe());
  }
  return std::nullopt;
}

}  // namespace faultline::harness
