#include "fault_plan.hpp"

#include <algorithm>

#include "event_log.hpp"

namespace faultline::transports::interpose {

namespace {

bool is_completion_kind(FaultKind kind) {
  return kind == FaultKind::kRewriteStatus || kind == FaultKind::kCorruptData ||
         kind == FaultKind::kDropCompletion || kind == FaultKind::kDuplicateCompletion;
}

bool matches(const FaultRule& rule, const Event& event) {
  if (rule.layer.empty() ? !event.outermost : rule.layer != event.layer) return false;
  if (rule.side != Side::kAny && rule.side != event.side) return false;
  if (rule.opcode && rule.opcode != event.opcode) return false;
  if (rule.qp_num && rule.qp_num != event.qp_num) return false;
  return true;
}

template <typename Count>
void take_smaller(std::optional<Count>& cap, const std::optional<Count>& other) {
  if (other) cap = cap ? std::min(*cap, *other) : *other;
}

}  // namespace

Plan& Plan::get() {
  // Never destroyed: programs poll from threads that outlive static destruction.
  static Plan* plan = new Plan();
  return *plan;
}

Plan::Plan() : rank_(launcher_rank()) {
  auto parsed = fault_rules_from_environment();
  if (!parsed.ok()) {
    log_event({{"event", "plan_error"}, {"error", parsed.error().describe()}});
    return;
  }
  random_.seed(parsed->seed);
  for (FaultRule& rule : parsed->rules) {
    if (!applies_here(rule)) continue;
    if (rule.kind == FaultKind::kLimits) {
      take_smaller(caps_.max_qp_wr, rule.caps.max_qp_wr);
      take_smaller(caps_.max_recv_wr, rule.caps.max_recv_wr);
      take_smaller(caps_.max_cqe, rule.caps.max_cqe);
      take_smaller(caps_.max_send_sge, rule.caps.max_send_sge);
      take_smaller(caps_.max_recv_sge, rule.caps.max_recv_sge);
      take_smaller(caps_.max_inline_data, rule.caps.max_inline_data);
      take_smaller(caps_.max_srq_wr, rule.caps.max_srq_wr);
      take_smaller(caps_.max_srq_sge, rule.caps.max_srq_sge);
      take_smaller(caps_.max_qp_rd_atom, rule.caps.max_qp_rd_atom);
      take_smaller(caps_.max_mr_size, rule.caps.max_mr_size);
      take_smaller(caps_.atomic_cap, rule.caps.atomic_cap);
      if (rule.caps.vendor_id) caps_.vendor_id = rule.caps.vendor_id;
      if (rule.caps.vendor_part_id) caps_.vendor_part_id = rule.caps.vendor_part_id;
      caps_.refusal_errno = rule.caps.refusal_errno;
      caps_.clamp_inline = caps_.clamp_inline || rule.caps.clamp_inline;
    }
    kinds_ |= 1U << static_cast<unsigned>(rule.kind);
    completion_rules_ = completion_rules_ || is_completion_kind(rule.kind);
    data_rules_ = data_rules_ || rule.data != DataAction::kKeep;
    suppress_rules_ = suppress_rules_ || rule.data == DataAction::kSuppress;
    rules_.push_back(std::move(rule));
  }
}

bool Plan::applies_here(const FaultRule& rule) const { return !rule.rank || rule.rank == rank_; }

std::optional<FaultRule> Plan::completion_fault(const Event& event, bool (*allowed)(FaultKind)) {
  if (!completion_rules_) return std::nullopt;  // no lock taken for a plan without any
  std::lock_guard lock(mutex_);
  for (FaultRule& rule : rules_) {
    if (!is_completion_kind(rule.kind) || (allowed != nullptr && !allowed(rule.kind))) continue;
    if (matches(rule, event) && rule.fires(random_)) return rule;
  }
  return std::nullopt;
}

std::optional<FaultRule> Plan::post_fault(const Event& event) {
  if (!has(FaultKind::kFailPost)) return std::nullopt;
  std::lock_guard lock(mutex_);
  for (FaultRule& rule : rules_) {
    if (rule.kind == FaultKind::kFailPost && matches(rule, event) && rule.fires(random_))
      return rule;
  }
  return std::nullopt;
}

void log_fault(const FaultRule& rule, nlohmann::json details) {
  details["event"] = "fault";
  details["kind"] = rule.kind_name();
  details["match"] = rule.matched;
  if (rule.kind == FaultKind::kRewriteStatus)
    details["status"] = transports::to_string(rule.status);
  if (rule.data != DataAction::kKeep)
    details["data"] = rule.data == DataAction::kScribble ? "scribble" : "suppress";
  log_event(std::move(details));
}

}  // namespace faultline::transports::interpose
