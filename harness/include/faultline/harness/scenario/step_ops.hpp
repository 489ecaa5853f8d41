#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "faultline/harness/scenario_link.hpp"
#include "faultline/harness/verdict.hpp"
#include "faultline/protocols/collective/ring.hpp"
#include "faultline/protocols/kv/kv_store.hpp"
#include "faultline/protocols/tagged/tagged_engine.hpp"
#include "faultline/transports/fault/fault_device.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::harness {

/// A registered buffer of a scenario side, by the name the scenario gives it.
struct ScenarioBuffer {
  std::shared_ptr<std::byte[]> memory;
  size_t bytes = 0;
  std::unique_ptr<transports::MemoryRegion> region;
};

/// Everything the steps of one side share.
struct StepState {
  StepState() = default;
  /// Endpoints go first, while the buffers and engine memory their outstanding work refers
  /// to still exist (as a QP is destroyed before its MRs); the device goes last.
  ~StepState();
  StepState(const StepState&) = delete;
  StepState& operator=(const StepState&) = delete;

  ScenarioLink* link = nullptr;
  std::string role;
  size_t rank = 0;  ///< this side's place: 0 or 1 in a pair, 0..size-1 in a ring
  size_t size = 2;
  uint64_t seed = 0;
  std::unique_ptr<transports::Device> device;
  std::unique_ptr<transports::Endpoint> endpoint;
  std::map<std::string, ScenarioBuffer> buffers;
  std::map<std::string, transports::RemoteBuffer> peer_buffers;
  std::shared_ptr<transports::fault::FaultLog> faults_applied;
  /// Completions reaped while waiting for the peer (see `progress`), handed to the next polls.
  std::deque<transports::Completion> reaped;
  /// The kv engine of this side, made by its first kv step, with the mutations of its faults.
  std::vector<protocols::kv::Mutation> kv_mutations;
  std::unique_ptr<protocols::kv::Rendezvous> kv;
  std::unique_ptr<protocols::kv::KvServer> kv_server;
  protocols::kv::KeyValues kv_pushed;  ///< what this worker pushed, to check pulls against
  /// The tagged engine of this side, made by its first tagged step with the scenario's
  /// `tagged` options; how many messages of each tag this side sent and received so far.
  nlohmann::json tagged_options = nlohmann::json::object();
  std::unique_ptr<protocols::tagged::TaggedEngine> tagged;
  std::map<uint64_t, uint64_t> tagged_sent;
  std::map<uint64_t, uint64_t> tagged_received;
  /// The ring of a ring scenario: endpoints to the next and from the previous rank.
  std::unique_ptr<transports::Endpoint> ring_next;
  std::unique_ptr<transports::Endpoint> ring_prev;
  std::unique_ptr<protocols::collective::Ring> ring;
};

/// Drives the endpoint while the side waits for its peer: polls without blocking and keeps
/// what completes for the next `poll` steps; where a protocol engine owns the endpoint, drives
/// that engine instead (its completions are its own).
void progress(StepState& state);

/// How one step went: nullopt when it met its expectation; otherwise the side's outcome
/// (fail with expected/observed, or error when the harness broke). `note` is what the step
/// observed either way, kept as evidence.
struct StepResult {
  bool met = true;
  Verdict verdict = Verdict::kPass;
  std::string expected;
  std::string observed;
  std::string note;
  std::string hint;
};

using StepOp = std::function<StepResult(StepState&, const nlohmann::json& step)>;

/// The step operations scenario files may use: the raw transport operations here, protocol
/// operations added by the protocols layer. The one registry; nothing registers itself.
const std::map<std::string, StepOp>& step_ops();

/// The step met its expectation; `note` is what it saw.
StepResult met(std::string note);
/// The code under test did not do what the step expects: "expected X, got Y".
StepResult failed(std::string expected, std::string observed, std::string note = {},
                  std::string hint = {});
/// A mistake in the scenario or the harness, not in the code under test (verdict `error`).
StepResult broken(const transports::Error& error);
StepResult broken(std::string text);

/// Holds `status` (what `what` returned) against the step's error `expect` block, if any.
StepResult judge_status(const nlohmann::json& step, const transports::Status& status,
                        const std::string& what, const std::string& success_note);

/// The kv step operations (kv.push, kv.pull, kv.serve), added to `ops`.
void add_protocol_ops(std::map<std::string, StepOp>& ops);
/// The ring operations (ring.connect, collective.*), added to `ops`.
void add_collective_ops(std::map<std::string, StepOp>& ops);
/// The tagged operations (tagged.send, tagged.recv, tagged.group_recv, tagged.progress).
void add_tagged_ops(std::map<std::string, StepOp>& ops);

/// The protocol mutations of `role` from a scenario's `faults` block.
std::vector<protocols::kv::Mutation> kv_mutations_for(const nlohmann::json& document,
                                                      const std::string& role);

/// Capabilities the steps of `role` need (a `write` needs rdma_write, ...), added to the
/// scenario's `requires`.
std::vector<std::string> capabilities_needed(const nlohmann::json& document,
                                             const std::string& role);

}  // namespace faultline::harness
