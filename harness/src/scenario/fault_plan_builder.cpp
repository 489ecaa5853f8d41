// Builds the fault decorator's plan from a scenario's `faults` block.
#include "faultline/core/fnv1a.hpp"
#include "faultline/harness/scenario/scenario_runner.hpp"
#include "faultline/transports/completion_status.hpp"

namespace faultline::harness {

namespace {

using nlohmann::json;
using namespace transports::fault;

CompletionFaultKind completion_kind(const std::string& kind) {
  if (kind == "drop_completion") return CompletionFaultKind::kDrop;
  if (kind == "delay_completion") return CompletionFaultKind::kDelay;
  if (kind == "duplicate_completion") return CompletionFaultKind::kDuplicate;
  if (kind == "replay_completion") return CompletionFaultKind::kReplay;
  return CompletionFaultKind::kRewriteStatus;
}

}  // namespace

uint64_t side_seed(uint64_t run_seed, const std::string& scenario_id, const std::string& role) {
  uint64_t hash = kFnv1aBasis ^ run_seed;
  constexpr std::byte kSeparator{0xff};
  for (const std::string* text : {&scenario_id, &role}) {
    hash = fnv1a(std::as_bytes(std::span(*text)), hash);
    hash = fnv1a({&kSeparator, 1}, hash);
  }
  return hash;
}

FaultPlan fault_plan_for(const json& document, const std::string& role, uint64_t seed,
                         size_t rank) {
  FaultPlan plan;
  plan.seed = seed;
  for (const auto& fault : document.value("faults", json::array())) {
    if (fault.at("role") != role) continue;
    if (fault.contains("rank") && fault.at("rank") != rank) continue;
    const std::string kind = fault.at("kind");
    if (kind == "fail_post") {
      plan.posts.push_back(
          {fault.value("post", "send") == "recv" ? PostKind::kRecv : PostKind::kSend,
           fault.at("nth").get<uint64_t>(), fault.at("errno").get<int>()});
    } else if (kind == "inline") {
      plan.inline_override =
          fault.at("mode") == "off" ? InlineOverride::kForceOff : InlineOverride::kForceAboveLimit;
    } else if (kind == "limits") {
      for (const auto& name : overridable_limit_names()) {
        if (fault.contains(name)) plan.limits[name] = fault.at(name).get<uint64_t>();
      }
      plan.limits_source = fault.contains("profile")
                               ? "device profile " + fault.at("profile").get<std::string>()
                               : std::string("the scenario's limits fault");
    } else if (kind.find("completion") != std::string::npos || kind == "rewrite_status") {
      CompletionFault completion;
      completion.kind = completion_kind(kind);
      if (fault.contains("opcode"))
        completion.opcode = transports::opcode_from_string(fault.at("opcode").get<std::string>());
      completion.when.nth = fault.value("nth", uint64_t{0});
      completion.when.every = fault.value("every", uint64_t{0});
      completion.when.probability = fault.value("probability", 0.0);
      if (fault.contains("status")) {
        completion.status =
            transports::completion_status_from_string(fault.at("status").get<std::string>())
                .value_or(transports::CompletionStatus::kGeneralErr);
      }
      completion.scribble = fault.value("scribble", false);
      completion.delay = std::chrono::milliseconds(fault.value("delay_ms", 0));
      completion.reuse_qp_number = fault.value("reuse_qp_number", false);
      plan.completions.push_back(completion);
    }
  }
  return plan;
}

}  // namespace faultline::harness
