#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "faultline/harness/base/first_contact.hpp"
#include "faultline/harness/base/verdict.hpp"
#include "faultline/harness/control/scenario_link.hpp"
#include "faultline/harness/scenario/protocol_session.hpp"
#include "faultline/transports/fault/fault_device.hpp"
#include "faultline/transports/registered_buffer.hpp"
#include "faultline/transports/transport.hpp"

namespace faultline::harness {

/// Everything the steps of one side share.
struct StepState {
  StepState() = default;
  /// Endpoints go first (the sessions' own, then the side's), while the buffers and engine
  /// memory their outstanding work refers to still exist (as a QP is destroyed before its
  /// MRs); then the engines and buffers; the device goes last.
  ~StepState();
  StepState(const StepState&) = delete;
  StepState& operator=(const StepState&) = delete;

  const nlohmann::json* document = nullptr;  ///< the scenario: engines read options and faults
  ScenarioLink* link = nullptr;
  std::string role;
  size_t rank = 0;  ///< this side's place: 0 or 1 in a pair, 0..size-1 in a ring
  size_t size = 2;
  uint64_t seed = 0;
  std::unique_ptr<transports::Device> device;
  std::unique_ptr<transports::Endpoint> endpoint;
  std::map<std::string, transports::RegisteredBuffer> buffers;  ///< by the scenario's names
  std::map<std::string, transports::RemoteBuffer> peer_buffers;
  /// Completions reaped while waiting for the peer (see `progress`), handed to the next polls.
  std::deque<transports::Completion> reaped;
  /// The protocol engines of this side, made by their first steps (see session_of).
  ProtocolSessions sessions;
  /// Set by a `die` step: the signal this side's process ends by, after its result is sent.
  int dies_by = 0;
  /// The two endpoints `connect` joined, to explain a first message that never arrives.
  FirstContact first_contact;
};

/// The session of the engine `name` on this side, made as `Session(state)` by its first step.
template <typename Session>
Session& session_of(StepState& state, const std::string& name) {
  std::unique_ptr<ProtocolSession>& slot = state.sessions[name];
  if (!slot) slot = std::make_unique<Session>(state);
  return static_cast<Session&>(*slot);
}

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

/// The bytes of memory one step of an op holds (its buffers), for the loader's bound on a
/// scenario's memory; 0 for an op that holds none worth counting.
using StepMemory = uint64_t (*)(const nlohmann::json& step);

/// One step operation, the capabilities any use of it needs (the kv engine signals its writes
/// with immediate data, so every kv step needs write_with_imm), and the memory it holds: an
/// engine that registers memory says how much here, so the loader names no engine.
struct StepOpEntry {
  StepOp run;
  std::vector<std::string> capabilities;
  StepMemory memory = nullptr;
  bool every_role_holds_it = false;  ///< both sides hold the memory (kv: worker and server)
};
using StepOps = std::map<std::string, StepOpEntry>;

/// The step operations scenario files may use: the raw transport operations here, and the
/// protocol engines' operations from add_protocol_ops. The one registry; nothing registers
/// itself.
const StepOps& step_ops();

/// Every protocol engine's operations, added to `ops` (protocol_registry.cpp: one line per
/// engine).
void add_protocol_ops(StepOps& ops);

/// The step met its expectation; `note` is what it saw.
StepResult met(std::string note);
/// The code under test did not do what the step expects: "expected X, got Y".
StepResult failed(std::string expected, std::string observed, std::string note = {},
                  std::string hint = {});
/// A mistake in the scenario or the harness, not in the code under test (verdict `error`).
StepResult broken(const Error& error);
StepResult broken(std::string text);

/// Holds `status` (what `what` returned) against the step's error `expect` block, if any.
StepResult judge_status(const nlohmann::json& step, const Status& status, const std::string& what,
                        const std::string& success_note);

/// The endpoint a step's `config` (and `derivations`) asks for, from `defaults` (every field
/// of endpoint_config: create_endpoint and ring.connect read the same ones).
transports::EndpointConfig endpoint_config_of(const nlohmann::json& step,
                                              transports::EndpointConfig defaults = {});

/// Capabilities the steps of `role` need (a `write` needs rdma_write, ...), added to the
/// scenario's `requires`.
std::vector<std::string> capabilities_needed(const nlohmann::json& document,
                                             const std::string& role);

}  // namespace faultline::harness
