#pragma once

#include <array>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "faultline/transports/fault/fault_device.hpp"

namespace faultline::transports::fault {

/// The matches of a plan's firing faults, shared by every endpoint of one device: `nth` and
/// `every` count on a side's endpoints together (a ring's rank has two), as the scenario says.
class FaultCounts {
 public:
  explicit FaultCounts(uint64_t seed) : seed_(seed) {}
  /// The next match of fault `index` of the plan (1-based), and whether `fault` fires on it.
  std::pair<uint64_t, bool> next_match(size_t index, const FaultSpec& fault);

 private:
  std::mutex mutex_;
  uint64_t seed_;
  std::map<size_t, uint64_t> matches_;
  std::map<size_t, std::mt19937_64> random_;  // one per fault, seeded from the plan
};

/// An endpoint that applies the completion, post and inline faults of a plan to the
/// endpoint it wraps, and records each one it applies.
class FaultEndpoint : public Endpoint {
 public:
  /// `stale`: completions held for replay, shared by every endpoint of one device, so that a
  /// replayed completion shows up after the next connect of whichever endpoint comes next (a
  /// completion queue that outlived its endpoint). `counts`: the device's.
  FaultEndpoint(std::unique_ptr<Endpoint> inner, const FaultPlan& plan,
                std::shared_ptr<FaultLog> log, std::shared_ptr<std::vector<Completion>> stale,
                std::shared_ptr<FaultCounts> counts);

  std::vector<std::byte> address() const override { return inner_->address(); }
  Status connect(std::span<const std::byte> peer_address) override;
  Status post_send(const WorkRequest& request) override;
  Status post_recv(const RecvRequest& request) override;
  Result<size_t> poll(std::span<Completion> out, std::chrono::milliseconds timeout) override;
  Status modify_to_error() override { return inner_->modify_to_error(); }
  uint32_t qp_num() const override { return inner_->qp_num(); }
  const EndpointConfig& config() const override { return inner_->config(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Delayed {
    Clock::time_point due;
    Completion completion;
  };

  // fail_post (an error) and segment_count (`segments` changed, into `changed`).
  Status apply_post_faults(Side post, Opcode op, uint64_t wr_id, std::span<const Segment>& segments,
                           std::vector<Segment>& changed);
  bool any_fault_for(Opcode op) const;
  void apply(Completion completion);
  size_t take_ready(std::span<Completion> out);
  void scribble(const Completion& completion, std::string& detail);
  void record(std::string kind, std::string detail);

  std::unique_ptr<Endpoint> inner_;
  // The plan's faults with a completion effect, and its fail_post and segment_count faults,
  // each with its index in the plan (its counts).
  std::vector<std::pair<size_t, FaultSpec>> completions_;
  std::vector<std::pair<size_t, FaultSpec>> post_faults_;
  std::shared_ptr<FaultCounts> counts_;
  InlineMode inline_mode_ = InlineMode::kNone;
  bool reuse_qp_number_ = false;  // a replayed completion takes the new endpoint's number
  std::shared_ptr<FaultLog> log_;
  // wr_id -> receive/read targets, kept only when a fault may scribble over them
  bool keeps_local_buffers_ = false;
  std::map<uint64_t, std::vector<Segment>> local_buffers_;
  std::vector<Completion> batch_;  // what one poll of the inner endpoint returned
  std::deque<Completion> ready_;
  std::vector<Delayed> delayed_;
  std::shared_ptr<std::vector<Completion>> replay_after_connect_;
};

}  // namespace faultline::transports::fault
