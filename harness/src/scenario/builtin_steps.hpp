// What the built-in scenarios share: their outcomes, buffers and the wait for one completion.
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <string>

#include "faultline/harness/base/first_contact.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"
#include "faultline/transports/registered_buffer.hpp"

namespace faultline::harness {

ScenarioOutcome harness_error(const Error& error);

ScenarioOutcome failure(std::string expected, std::string observed, std::string evidence,
                        std::string hint = {});

/// `length` bytes of host memory registered on `device` for every access.
Result<transports::RegisteredBuffer> make_buffer(transports::Device& device, size_t length);

/// Told of a completion wait's empty polls: what the host did to the waiting thread between
/// two polls that both found nothing delayed nothing (the monitor's probe leaves it out).
class PollWatcher {
 public:
  virtual ~PollWatcher() = default;
  virtual void polled_empty() = 0;
  virtual void wait_ended() = 0;
};

/// The next completion on `op`'s side, which must be a success of `op` (of `byte_len` bytes for
/// a receive); anything else is the scenario's failure, described (with both addresses, while
/// nothing got through yet). Sends and receives share the endpoint's queue, and a device may
/// complete a receive before the send ahead of it (rxe: the peer's next message ahead of the
/// ACK that completes this side's send): a success of the other side polled on the way waits
/// in `held` for its own call. With a `watcher`, polls itself (spinning a millisecond, then
/// easing off as the transports do) and tells it of each empty poll.
std::optional<ScenarioOutcome> expect_completion(transports::Endpoint& endpoint,
                                                 FirstContact& first, transports::Opcode op,
                                                 uint32_t byte_len,
                                                 std::chrono::milliseconds timeout,
                                                 std::deque<transports::Completion>& held,
                                                 PollWatcher* watcher = nullptr);

}  // namespace faultline::harness
