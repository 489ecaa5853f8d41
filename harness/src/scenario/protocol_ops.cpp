// The protocol step operations: the kv engine (kv.push, kv.pull, kv.serve) driven from a
// scenario, with the mutations of the scenario's faults.
#include <string>

#include "faultline/harness/scenario/step_ops.hpp"
#include "faultline/transports/data_pattern.hpp"

namespace faultline::harness {

namespace {

using nlohmann::json;
using protocols::kv::KeyValues;
using protocols::kv::Mutation;

// The kv engine of this side, made on first use (after connect: it posts its receives).
transports::Result<protocols::kv::Rendezvous*> kv_of(StepState& state, const std::string& side) {
  if (state.kv) return state.kv.get();
  if (!state.endpoint)
    return transports::Error{transports::ErrorCode::kInvalidArgument,
                             "a kv step before create_endpoint and connect"};
  auto made = protocols::kv::Rendezvous::create(*state.device, *state.endpoint,
                                                {.side = side, .mutations = state.kv_mutations});
  if (!made.ok()) return std::move(made).take_error();
  state.kv = std::move(made).value();
  return state.kv.get();
}

std::string events_of(const StepState& state) {
  std::string text;
  for (const auto& event : state.kv->events()) text += (text.empty() ? "" : "; ") + event;
  return text;
}

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
  auto kv = kv_of(state, "worker");
  if (!kv.ok()) return broken(kv.error());
  const KeyValues values = values_for(step);
  protocols::kv::KvWorker worker(*kv.value());
  const transports::Status pushed = worker.push(values);
  if (pushed.ok()) state.kv_pushed.insert(values.begin(), values.end());
  StepResult result =
      judge_status(step, pushed, "kv.push", "pushed " + std::to_string(values.size()) + " keys");
  result.note += " [" + events_of(state) + "]";
  return result;
}

StepResult kv_pull(StepState& state, const json& step) {
  auto kv = kv_of(state, "worker");
  if (!kv.ok()) return broken(kv.error());
  std::vector<uint64_t> keys;
  for (const auto& [key, _] : values_for(step)) keys.push_back(key);
  protocols::kv::KvWorker worker(*kv.value());
  auto pulled = worker.pull(keys);
  if (!pulled.ok() || step.contains("expect")) {
    StepResult result = judge_status(step, pulled.ok() ? transports::Status{} : pulled.error(),
                                     "kv.pull", "pulled " + std::to_string(keys.size()) + " keys");
    result.note += " [" + events_of(state) + "]";
    return result;
  }
  // Every key comes back with what this worker pushed (nothing, for a key never pushed).
  for (uint64_t key : keys) {
    auto found = pulled->find(key);
    auto pushed = state.kv_pushed.find(key);
    const size_t expected_bytes = pushed == state.kv_pushed.end() ? 0 : pushed->second.size();
    if (found == pulled->end()) return failed("key " + std::to_string(key) + " pulled", "absent");
    if (found->second.size() != expected_bytes ||
        (expected_bytes > 0 && found->second != pushed->second)) {
      return failed("key " + std::to_string(key) + " holds the " + std::to_string(expected_bytes) +
                        " bytes pushed",
                    std::to_string(found->second.size()) + " bytes that differ");
    }
  }
  return met("pulled " + std::to_string(keys.size()) + " keys, each as pushed [" +
             events_of(state) + "]");
}

StepResult kv_serve(StepState& state, const json& step) {
  auto kv = kv_of(state, "server");
  if (!kv.ok()) return broken(kv.error());
  if (!state.kv_server) state.kv_server = std::make_unique<protocols::kv::KvServer>(*kv.value());
  const size_t before = state.kv_server->violations().size();
  const size_t requests = step.at("requests");
  const transports::Status served = state.kv_server->serve(requests);
  const auto& violations = state.kv_server->violations();
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
  return met(expectation + (seen.empty() ? "" : ": " + seen) + " [" + events_of(state) + "]");
}

}  // namespace

void add_protocol_ops(std::map<std::string, StepOp>& ops) {
  ops["kv.push"] = kv_push;
  ops["kv.pull"] = kv_pull;
  ops["kv.serve"] = kv_serve;
}

std::vector<Mutation> kv_mutations_for(const json& document, const std::string& role) {
  std::vector<Mutation> mutations;
  for (const auto& fault : document.value("faults", json::array())) {
    if (fault.at("role") != role) continue;
    const std::string kind = fault.at("kind");
    Mutation mutation;
    if (kind == "drop_segment") {
      mutation.kind = Mutation::Kind::kDropSegment;
      mutation.target = fault.value("segment", "");
    } else if (kind == "add_segment") {
      mutation.kind = Mutation::Kind::kAddSegment;
    } else if (kind == "reorder_segments") {
      mutation.kind = Mutation::Kind::kReorderSegments;
    } else if (kind == "corrupt_header") {
      mutation.kind = Mutation::Kind::kCorruptHeader;
      mutation.target = fault.value("field", "");
    } else {
      continue;
    }
    mutation.message =
        protocols::kv::message_type_from_string(fault.at("message").get<std::string>())
            .value_or(protocols::kv::MessageType::kPushRequest);
    mutations.push_back(std::move(mutation));
  }
  return mutations;
}

}  // namespace faultline::harness
