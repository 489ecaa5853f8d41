#include "builtin_steps.hpp"

#include <algorithm>
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

bool receive_side(Opcode op) { return op == Opcode::kRecv || op == Opcode::kRecvRdmaWithImm; }

// The next completion on `op`'s side (receive or send), taken from `held` if one waits there;
// a successful completion of the other side polled first is held for its own wait.
Result<size_t> next_on_side(Endpoint& endpoint, Opcode op, Completion& completion,
                            std::deque<Completion>& held, std::chrono::milliseconds timeout,
                            PollWatcher* watcher) {
  const auto same_side = [&](const Completion& c) {
    return receive_side(c.op) == receive_side(op);
  };
  if (auto it = std::find_if(held.begin(), held.end(), same_side); it != held.end()) {
    completion = *it;
    held.erase(it);
    return size_t{1};
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto left =
        std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()),
                 std::chrono::milliseconds{0});
    auto polled = watcher ? poll_watched(endpoint, completion, left, *watcher)
                          : endpoint.poll({&completion, 1}, left);
    if (!polled.ok() || polled.value() == 0 || !completion.ok() || same_side(completion))
      return polled;
    held.push_back(completion);
  }
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
                                                 std::deque<Completion>& held,
                                                 PollWatcher* watcher) {
  Completion completion;
  auto polled = next_on_side(endpoint, op, completion, held, timeout, watcher);
  if (!polled.ok()) return harness_error(polled.error());
  const auto bytes = [](Opcode of, uint32_t length) {
    return of == Opcode::kRecv ? " of " + std::to_string(length) + " bytes" : std::string();
  };
  const std::string expected = std::string(to_string(op)) + " SUCCESS" + bytes(op, byte_len);
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
    return failure(expected,
                   std::string(to_string(completion.op)) + " SUCCESS" +
                       bytes(completion.op, completion.byte_len),
                   completion.describe());
  }
  return std::nullopt;
}

}  // namespace faultline::harness
