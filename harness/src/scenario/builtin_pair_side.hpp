// One side of a built-in pair scenario (pingpong, probe): its endpoint and buffers, the
// exchange and connect through the coordinator, and the checked sends, receives and writes
// both scenarios are made of.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "builtin_steps.hpp"
#include "faultline/harness/base/first_contact.hpp"
#include "faultline/harness/scenario/builtin_scenarios.hpp"
#include "faultline/transports/registered_buffer.hpp"

namespace faultline::harness {

/// Every method returns the side's failure (a ScenarioOutcome), or nullopt.
class PairSide {
 public:
  using Outcome = std::optional<ScenarioOutcome>;

  /// Each completion waited for at most `timeout`.
  PairSide(ScenarioContext& context, std::chrono::milliseconds timeout)
      : context_(context), timeout_(timeout) {}

  /// On `device` (which outlives this side): an endpoint of `config`, a send and a receive
  /// buffer of `message_bytes`, a region of `region_bytes` the peer writes into; addresses and
  /// regions exchanged through the coordinator, connected, a receive posted, and both sides
  /// past the barrier "connected".
  Outcome connect(transports::Device& device, const transports::EndpointConfig& config,
                  size_t message_bytes, size_t region_bytes);
  /// The next completion: a success of `op` (of `bytes` for a receive), or the failure.
  Outcome expect(transports::Opcode op, uint32_t bytes);
  /// Sends `bytes` of pattern `seed` and waits for the send to complete.
  Outcome send(size_t bytes, unsigned seed, uint64_t wr_id);
  /// Receives `bytes` that must hold pattern `seed` (`what` names it), then posts the receive
  /// again.
  Outcome receive(size_t bytes, unsigned seed, const std::string& what);
  /// Fills the first `bytes` of this side's region with pattern `seed` and RDMA-writes them
  /// into the peer's region in writes of `piece` bytes, all posted, then all completed.
  Outcome write_region(size_t bytes, size_t piece, unsigned seed);
  /// After write_region: a one-byte send that orders after the writes; the peer's one-byte
  /// answer is 1 when the bytes landed. `what` names the check in the failure.
  Outcome ask_write_check(const std::string& what);
  /// The peer's part: waits for the ask, checks the first `bytes` of this side's region for
  /// pattern `seed`, and answers.
  Outcome answer_write_check(size_t bytes, unsigned seed, const std::string& what);
  /// Both sides end together, so no endpoint goes away under the peer's last send.
  Outcome finish();
  /// The endpoint closed (before the buffers and the device).
  void close() { endpoint_.reset(); }
  /// From now on every completion wait tells `watcher` (outliving this side) of its empty polls.
  void watch_polls(PollWatcher* watcher) { watcher_ = watcher; }

 private:
  Status repost();

  ScenarioContext& context_;
  std::chrono::milliseconds timeout_;
  PollWatcher* watcher_ = nullptr;
  transports::RegisteredBuffer send_buffer_;
  transports::RegisteredBuffer recv_buffer_;
  transports::RegisteredBuffer region_;
  transports::RemoteBuffer peer_region_;
  FirstContact first_contact_;
  std::deque<transports::Completion> held_;  // polled before their own wait (expect_completion)
  std::unique_ptr<transports::Endpoint> endpoint_;  // last: gone before the buffers
};

}  // namespace faultline::harness
