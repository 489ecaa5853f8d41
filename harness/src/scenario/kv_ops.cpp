// The kv engine's step operations (kv.push, kv.pull, kv.serve) driven from a scenario, with
// the mutations of the scenario's faults.
#include <map>
#include <string>

#include "faultline/harness/scenario/scenario_runner.hpp"
#include "faultline/harness/scenario/step_ops.hpp"
#include "faultline/protocols/kv/kv_store.hpp"
#include "faultline/transports/data_pattern.hpp"

namespace faultline::harness {

namespace {

using nlohmann::json;
using protocols::kv::KeyValues;
using protocols::kv::Mutation;

std::vector<Mutation> kv_mutations_for(const json& document, const std::string& role);

// The kv engine of one side: the rendezvous on the side's endpoint (made by the first kv step,
// after connect: it posts its receives), the server loop on it, and what this worker pushed.
class KvSession final : public ProtocolSession {
 public:
  explicit KvSession(StepState& state)
      : state_(state), mutations_(kv_mutations_for(*state.document, state.role)) {}

  Result<protocols::kv::Rendezvous*> rendezvous(const std::string& side) {
    if (rendezvous_) return rendezvous_.get();
    if (!state_.endpoint)
      return Error{ErrorCode::kInvalidArgument, "a kv step before create_endpoint and connect"};
    auto made = protocols::kv::Rendezvous::create(*state_.device, *state_.endpoint,
                                                  {.side = side, .mutations = mutations_});
    if (!made.ok()) return std::move(made).take_error();
    rendezvous_ = std::move(made).value();
    return rendezvous_.get();
  }

  protocols::kv::KvServer& server() {
    if (!server_) server_ = std::make_unique<protocols::kv::KvServer>(*rendezvous_);
    return *server_;
  }

  std::string events() const {
    std::string text;
    for (const auto& event : rendezvous_->events()) text += (text.empty() ? "" : "; ") + event;
    return text;
  }

  KeyValues pushed;  ///< what this worker pushed, to check pulls against

  // The rendezvous waits for its own completions: the endpoint is the engine's once it exists.
  bool progress() override { return rendezvous_ != nullptr; }
  void endpoint_closed() override {
    server_.reset();
    rendezvous_.reset();
  }

 private:
  StepState& state_;
  std::vector<Mutation> mutations_;
  std::unique_ptr<protocols::kv::Rendezvous> rendezvous_;
  std::unique_ptr<protocols::kv::KvServer> server_;
};

KvSession& kv_session(StepState& state) { return session_of<KvSession>(state, "kv"); }

KeyValues values_for(const json& step) {
  const size_t keys = step.value("keys", 64);
  const size_t bytes = step.value("value_bytes", 4096);
  const unsigned seed = step.value("seed", 1U);
  KeyValues values;
  for (size_t i = 0; i < keys; ++i) {
    auto& value = values[i * 7 + 1];
    value.resize(bytes);
    transports::fill_pattern(value.data(), bytes, seed + static_cast<unsigned>(i));
  }
  return values;
}

StepResult kv_push(StepState& state, const json& step) {
  KvSession& session = kv_session(state);
  auto kv = session.rendezvous("worker");
  if (!kv.ok()) return broken(kv.error());
  const KeyValues values = values_for(step);
  protocols::kv::KvWorker worker(*kv.value());
  const Status pushed = worker.push(values);
  if (pushed.ok()) session.pushed.insert(values.begin(), values.end());
  StepResult result =
      judge_status(step, pushed, "kv.push", "pushed " + std::to_string(values.size()) + " keys");
  result.note += " [" + session.events() + "]";
  return result;
}

StepResult kv_pull(StepState& state, const json& step) {
  KvSession& session = kv_session(state);
  auto kv = session.rendezvous("worker");
  if (!kv.ok()) return broken(kv.error());
  std::vector<uint64_t> keys;
  for (const auto& [key, _] : values_for(step)) keys.push_back(key);
  protocols::kv::KvWorker worker(*kv.value());
  auto pulled = worker.pull(keys);
  if (!pulled.ok() || step.contains("expect")) {
    StepResult result = judge_status(step, pulled.ok() ? Status{} : pulled.error(), "kv.pull",
                                     "pulled " + std::to_string(keys.size()) + " keys");
    result.note += " [" + session.events() + "]";
    return result;
  }
  // Every key comes back with what this worker pushed (nothing, for a key never pushed).
  for (uint64_t key : keys) {
    auto found = pulled->find(key);
    auto pushed = session.pushed.find(key);
    const size_t expected_bytes = pushed == session.pushed.end() ? 0 : pushed->second.size();
    if (found == pulled->end()) return failed("key " + std::to_string(key) + " pulled", "absent");
    if (found->second.size() != expected_bytes ||
        (expected_bytes > 0 && found->second != pushed->second)) {
      return failed("key " + std::to_string(key) + " holds the " + std::to_string(expected_bytes) +
                        " bytes pushed",
                    std::to_string(found->second.size()) + " bytes that differ");
    }
  }
  return met("pulled " + std::to_string(keys.size()) + " keys, each as pushed [" +
             session.events() + "]");
}

StepResult kv_serve(StepState& state, const json& step) {
  KvSession& session = kv_session(state);
  auto kv = session.rendezvous("server");
  if (!kv.ok()) return broken(kv.error());
  protocols::kv::KvServer& server = session.server();
  const size_t before = server.violations().size();
  const size_t requests = step.at("requests");
  const Status served = server.serve(requests);
  const auto& violations = server.violations();
  std::string seen;
  for (size_t i = before; i < violations.size(); ++i)
    seen += (seen.empty() ? "" : "; ") + violations[i];
  const size_t expected = step.value("violations", 0);
  const std::string expectation = "served " + std::to_string(requests) + " requests with " +
                                  std::to_string(expected) + " violation(s)";
  if (!served.ok()) return failed(expectation, served.error().describe());
  if (violations.size() - before != expected) {
    return failed(expectation, std::to_string(violations.size() - before) + " violation(s)" +
                                   (seen.empty() ? "" : ": " + seen));
  }
  return met(expectation + (seen.empty() ? "" : ": " + seen) + " [" + session.events() + "]");
}

// The protocol mutations of `role` from the scenario's `faults` block (the side's other faults
// are the decorator's; a block that does not parse failed the side before its steps ran).
std::vector<Mutation> kv_mutations_for(const json& document, const std::string& role) {
  using transports::fault::FaultKind;
  static const std::map<FaultKind, Mutation::Kind> mutation_of_kind = {
      {FaultKind::kDropSegment, Mutation::Kind::kDropSegment},
      {FaultKind::kAddSegment, Mutation::Kind::kAddSegment},
      {FaultKind::kReorderSegments, Mutation::Kind::kReorderSegments},
      {FaultKind::kCorruptHeader, Mutation::Kind::kCorruptHeader}};
  std::vector<Mutation> mutations;
  auto faults = side_faults(document, role);
  if (!faults.ok()) return mutations;
  for (const auto& fault : faults.value()) {
    const auto kind = mutation_of_kind.find(fault.kind);
    if (kind == mutation_of_kind.end()) continue;
    Mutation mutation;
    mutation.kind = kind->second;
    mutation.target = fault.target;
    mutation.message = protocols::kv::message_type_from_string(fault.message)
                           .value_or(protocols::kv::MessageType::kPushRequest);
    mutations.push_back(std::move(mutation));
  }
  return mutations;
}

// The values a push or pull moves, held by the worker and by the server.
uint64_t kv_memory(const json& step) {
  return step.value("keys", uint64_t{0}) * step.value("value_bytes", uint64_t{0});
}

}  // namespace

void add_kv_ops(StepOps& ops) {
  // The kv engine signals RDMA-written data with immediate data.
  ops["kv.push"] = {kv_push, {"write_with_imm"}, kv_memory, true};
  ops["kv.pull"] = {kv_pull, {"write_with_imm"}, kv_memory, true};
  ops["kv.serve"] = {kv_serve, {"write_with_imm"}};
}

}  // namespace faultline::harness
