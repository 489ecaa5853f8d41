#include "process_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "call_sites.hpp"
#include "event_log.hpp"
#include "post_attempt.hpp"

namespace faultline::transports::interpose {

namespace {

// The call site of the post or poll being asked about, found once per question (a stack walk).
class LazySite {
 public:
  explicit LazySite(const Event& event) : event_(event) {}
  const std::string& id() {
    if (!id_) id_ = site_of(event_);
    return *id_;
  }

 private:
  const Event& event_;
  std::optional<std::string> id_;
};

bool matches(const FaultSpec& fault, const Event& event, LazySite& site) {
  if (fault.layer.empty() ? !event.outermost : fault.layer != event.layer) return false;
  if (fault.side != Side::kAny && fault.side != event.side) return false;
  if (fault.opcode && fault.opcode != event.opcode) return false;
  if (fault.qp_num && fault.qp_num != event.qp_num) return false;
  if (!fault.site.empty() && fault.site != site.id()) return false;
  return true;
}

// The plan in FAULTLINE_FAULTS (JSON text, or `@path` of a file); none when it is unset.
Result<fault::FaultSet> plan_from_environment() {
  const char* value = std::getenv("FAULTLINE_FAULTS");
  if (value == nullptr || *value == '\0') return fault::FaultSet{};
  std::string text = value;
  if (text.front() == '@') {
    std::ifstream file(text.substr(1));
    if (!file) return Error{ErrorCode::kIoError, "FAULTLINE_FAULTS: cannot read " + text.substr(1)};
    std::stringstream content;
    content << file.rdbuf();
    text = content.str();
  }
  const nlohmann::json plan = nlohmann::json::parse(text, nullptr, false);
  if (plan.is_discarded()) return Error{ErrorCode::kInvalidArgument, "FAULTLINE_FAULTS: not JSON"};
  return fault::parse_fault_set(plan, fault::kInterposer, "FAULTLINE_FAULTS");
}

// One more occurrence of a fault's filter (under `mutex`): a post's, taken back if the
// provider refuses the post (PostAttempt).
void count_occurrence(uint64_t& matched, std::mutex& mutex) {
  ++matched;
  if (PostAttempt* attempt = PostAttempt::current())
    attempt->on_refused([&matched, &mutex] {
      std::lock_guard lock(mutex);
      --matched;
    });
}

}  // namespace

Plan& Plan::get() {
  // Never destroyed: programs poll from threads that outlive static destruction.
  static Plan* plan = new Plan();
  return *plan;
}

Plan::Plan() : rank_(launcher_rank()) {
  auto parsed = plan_from_environment();
  if (!parsed.ok()) {
    log_event({{"event", "plan_error"}, {"error", parsed.error().describe()}});
    return;
  }
  random_.seed(parsed->seed);
  for (FaultSpec& fault : parsed->faults) {
    if (!applies_here(fault)) continue;
    if (fault.kind == FaultKind::kLimits) caps_.take_smaller(fault.caps);
    kinds_ |= 1U << static_cast<unsigned>(fault.kind);
    if (fault.kind == FaultKind::kInline)
      inline_modes_ |= 1U << static_cast<unsigned>(fault.inline_mode);
    completion_rules_ = completion_rules_ || fault.info().effect.any();
    completion_filters_ =
        completion_filters_ || (fault.info().effect.any() &&
                                (fault.side != Side::kAny || fault.opcode || !fault.site.empty()));
    data_rules_ = data_rules_ || fault.data != DataAction::kKeep;
    suppress_rules_ = suppress_rules_ || fault.data == DataAction::kSuppress;
    maps_sites_ = maps_sites_ || fault.map_sites;
    observes_fields_ =
        observes_fields_ || (fault.kind == FaultKind::kObserve && fault.field.width > 0);
    faults_.push_back({std::move(fault)});
  }
}

bool Plan::applies_here(const FaultSpec& fault) const { return !fault.rank || fault.rank == rank_; }

std::optional<FiredFault> Plan::completion_fault(const Event& event,
                                                 bool (*allowed)(const FaultSpec&)) {
  if (!completion_rules_) return std::nullopt;  // no lock taken for a plan without any
  LazySite site(event);
  std::lock_guard lock(mutex_);
  for (Counted& fault : faults_) {
    if (!fault.spec.info().effect.any() || (allowed != nullptr && !allowed(fault.spec))) continue;
    if (!matches(fault.spec, event, site)) continue;
    if (fault.spec.when.fires(++fault.matched, random_))  // a completion: no post's to undo
      return FiredFault{fault.spec, fault.matched};
  }
  return std::nullopt;
}

std::optional<FiredFault> Plan::post_fault(const Event& event, FaultKind kind) {
  if (!has(kind)) return std::nullopt;
  LazySite site(event);
  std::lock_guard lock(mutex_);
  for (Counted& fault : faults_) {
    if (fault.spec.kind != kind || !matches(fault.spec, event, site)) continue;
    count_occurrence(fault.matched, mutex_);
    if (fault.spec.when.fires(fault.matched, random_)) return FiredFault{fault.spec, fault.matched};
  }
  return std::nullopt;
}

std::optional<FiredFault> Plan::field_fault(
    const Event& event, uint64_t length,
    const std::function<std::optional<uint64_t>(const fault::FieldRewrite&)>& read) {
  if (!has(FaultKind::kRewriteField)) return std::nullopt;
  LazySite site(event);
  std::lock_guard lock(mutex_);
  for (Counted& fault : faults_) {
    if (fault.spec.kind != FaultKind::kRewriteField || !matches(fault.spec, event, site)) continue;
    if (!fault.spec.field.matches(length, read(fault.spec.field))) continue;
    count_occurrence(fault.matched, mutex_);
    if (fault.spec.when.fires(fault.matched, random_)) return FiredFault{fault.spec, fault.matched};
  }
  return std::nullopt;
}

void Plan::log_observed_fields(
    const Event& event, uint64_t length,
    const std::function<std::optional<uint64_t>(const fault::FieldRewrite&)>& read,
    const nlohmann::json& details) {
  if (!observes_fields_) return;
  LazySite site(event);
  for (const Counted& fault : faults_) {  // read only: nothing counted
    if (fault.spec.kind != FaultKind::kObserve || fault.spec.field.width == 0) continue;
    if (!matches(fault.spec, event, site)) continue;
    const auto value = read(fault.spec.field);
    if (!fault.spec.field.matches(length, value)) continue;
    nlohmann::json line = details;
    line["event"] = "field";
    line["bytes"] = length;
    line["offset"] = fault.spec.field.offset;
    line["width"] = fault.spec.field.width;
    line["value"] = *value;
    if (event.opcode) line["opcode"] = transports::to_string(*event.opcode);
    log_event(std::move(line));
  }
}

std::optional<FiredFault> Plan::inline_fault(
    const Event& event, const std::function<bool(fault::InlineMode)>& changes) {
  if (!has(FaultKind::kInline)) return std::nullopt;
  LazySite site(event);
  std::lock_guard lock(mutex_);
  for (Counted& fault : faults_) {
    if (fault.spec.kind != FaultKind::kInline || !matches(fault.spec, event, site) ||
        !changes(fault.spec.inline_mode))
      continue;
    count_occurrence(fault.matched, mutex_);
    return FiredFault{fault.spec, fault.matched};
  }
  return std::nullopt;
}

void log_fault(const FiredFault& fired, nlohmann::json details) {
  details["event"] = "fault";
  details["kind"] = fired.kind_name();
  details["match"] = fired.match;
  if (fired.info().effect.rewrite_status) details["status"] = transports::to_string(fired.status);
  if (fired.data != DataAction::kKeep)
    details["data"] = fired.data == DataAction::kScribble ? "scribble" : "suppress";
  // A fault on a post stands once the provider takes the post (PostAttempt).
  if (PostAttempt* attempt = PostAttempt::current()) {
    attempt->hold(std::move(details));
    return;
  }
  log_event(std::move(details));
}

nlohmann::json field_details(const fault::FieldRewrite& field,
                             std::optional<std::pair<uint64_t, uint64_t>> values) {
  nlohmann::json details = {{"field", {{"offset", field.offset}, {"width", field.width}}}};
  if (values) details["value"] = {values->first, values->second};
  return details;
}

std::optional<int> launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0')
      return std::atoi(value);
  }
  return std::nullopt;
}

}  // namespace faultline::transports::interpose
