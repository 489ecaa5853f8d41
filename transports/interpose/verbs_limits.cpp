#include "verbs_limits.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "call_stack.hpp"
#include "event_log.hpp"
#include "fault_plan.hpp"
#include "verbs_real.hpp"

namespace faultline::transports::interpose {

namespace {

bool above(uint64_t asked, const std::optional<uint32_t>& cap) { return cap && asked > *cap; }

int refuse(const char* call, const char* field, uint64_t asked, uint32_t cap,
           ibv_context* context) {
  const int refusal = Plan::get().caps().refusal_errno;
  log_event({{"event", "fault"},
             {"kind", "limits"},
             {"call", call},
             {"device", device_name(context->device)},
             {"field", field},
             {"asked", asked},
             {"cap", cap},
             {"errno", refusal},
             {"error", std::strerror(refusal)}});
  errno = refusal;
  return refusal;
}

// observe: what the program asked for, and from where, for port-check to hold against targets.
// `granted`: whether the device here gave it (a probe it refused here too is no port finding);
// null when the plan refused it first.
void log_request(const char* call, ibv_context* context, nlohmann::json asked,
                 nlohmann::json granted = nullptr) {
  if (!Plan::get().has(FaultKind::kObserve)) return;
  log_event({{"event", "request"},
             {"call", call},
             {"device", device_name(context->device)},
             {"asked", std::move(asked)},
             {"granted", std::move(granted)},
             {"stack", caller_stack()}});
}

nlohmann::json qp_asked(const ibv_qp_cap& cap) {
  return {{"max_send_wr", cap.max_send_wr},
          {"max_recv_wr", cap.max_recv_wr},
          {"max_send_sge", cap.max_send_sge},
          {"max_recv_sge", cap.max_recv_sge},
          {"max_inline_data", cap.max_inline_data}};
}

template <typename Count>
void clamp(Count& value, const std::optional<uint32_t>& cap) {
  if (cap && static_cast<uint64_t>(value) > *cap) value = static_cast<Count>(*cap);
}

// The largest inline send seen on each QP: a new largest is a request worth logging, the same
// size again is not (the data path stays quiet).
bool larger_than_before(uint32_t qp_num, uint64_t length) {
  static std::mutex mutex;
  static std::unordered_map<uint32_t, uint64_t> largest;
  const std::lock_guard lock(mutex);
  uint64_t& seen = largest[qp_num];
  if (length <= seen) return false;
  seen = length;
  return true;
}

}  // namespace

int refuse_qp_caps(const ibv_qp_cap& cap, const char* call, ibv_context* context) {
  const LimitCaps& caps = Plan::get().caps();
  // A driver that clamps an inline request (hns) grants the cap; the post above it fails.
  const std::optional<uint32_t> no_cap;
  const std::optional<uint32_t>& inline_cap = caps.clamp_inline ? no_cap : caps.max_inline_data;
  // Each field the program asks for, against the cap that bounds it (max_qp_wr bounds both
  // queues, as the device attribute does).
  const struct {
    const char* field;
    uint32_t asked;
    const std::optional<uint32_t>& cap;
  } checks[] = {
      {"max_send_wr", cap.max_send_wr, caps.max_qp_wr},
      {"max_recv_wr", cap.max_recv_wr, caps.max_qp_wr},
      {"max_recv_wr", cap.max_recv_wr, caps.max_recv_wr},
      {"max_send_sge", cap.max_send_sge, caps.max_send_sge},
      {"max_recv_sge", cap.max_recv_sge, caps.max_recv_sge},
      {"max_inline_data", cap.max_inline_data, inline_cap},
  };
  for (const auto& check : checks) {
    if (!above(check.asked, check.cap)) continue;
    log_request(call, context, qp_asked(cap));
    return refuse(call, check.field, check.asked, *check.cap, context);
  }
  return 0;
}

void observe_qp_request(const ibv_qp_cap& cap, const char* call, ibv_context* context,
                        bool granted) {
  log_request(call, context, qp_asked(cap), granted);
}

void observe_cq_request(int cqe, const char* call, ibv_context* context, bool granted) {
  log_request(call, context, {{"cqe", cqe}}, granted);
}

void clamp_qp_caps(ibv_qp_cap& cap) {
  const LimitCaps& caps = Plan::get().caps();
  clamp(cap.max_send_wr, caps.max_qp_wr);
  clamp(cap.max_recv_wr, caps.max_qp_wr);
  clamp(cap.max_recv_wr, caps.max_recv_wr);
  clamp(cap.max_send_sge, caps.max_send_sge);
  clamp(cap.max_recv_sge, caps.max_recv_sge);
  clamp(cap.max_inline_data, caps.max_inline_data);
}

int refuse_cq_size(int cqe, const char* call, ibv_context* context) {
  const auto& cap = Plan::get().caps().max_cqe;
  if (cqe <= 0 || !above(static_cast<uint64_t>(cqe), cap)) return 0;
  log_request(call, context, {{"cqe", cqe}});
  return refuse(call, "cqe", static_cast<uint64_t>(cqe), *cap, context);
}

void clamp_device_attr(ibv_device_attr& attr, const char* call, ibv_context* context) {
  log_request(call, context, nlohmann::json::object(), true);
  const LimitCaps& caps = Plan::get().caps();
  const ibv_device_attr device = attr;
  clamp(attr.max_qp_wr, caps.max_qp_wr);
  clamp(attr.max_cqe, caps.max_cqe);
  // One max_sge in the device attributes: the smaller of the two sides' caps.
  clamp(attr.max_sge, caps.max_send_sge);
  clamp(attr.max_sge, caps.max_recv_sge);
  // The program was shown a smaller device: a fault applied (what it did then is its verdict).
  nlohmann::json lowered = nlohmann::json::object();
  if (attr.max_qp_wr != device.max_qp_wr) lowered["max_qp_wr"] = {device.max_qp_wr, attr.max_qp_wr};
  if (attr.max_cqe != device.max_cqe) lowered["max_cqe"] = {device.max_cqe, attr.max_cqe};
  if (attr.max_sge != device.max_sge) lowered["max_sge"] = {device.max_sge, attr.max_sge};
  if (lowered.empty()) return;
  log_event({{"event", "fault"}, {"kind", "limits"}, {"call", call}, {"lowered", lowered}});
}

int check_inline_post(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  const Plan& plan = Plan::get();
  const auto cap = plan.caps().max_inline_data;
  const bool observing = plan.has(FaultKind::kObserve);
  if (!cap && !observing) return 0;
  for (; wr != nullptr; wr = wr->next) {
    if ((wr->send_flags & IBV_SEND_INLINE) == 0) continue;
    uint64_t length = 0;
    for (int i = 0; i < wr->num_sge; ++i) length += wr->sg_list[i].length;
    if (observing && larger_than_before(qp->qp_num, length))
      log_request("ibv_post_send", qp->context, {{"inline_bytes", length}, {"qp_num", qp->qp_num}},
                  nullptr);
    if (!cap || length <= *cap) continue;
    *bad_wr = wr;
    const int refusal = plan.caps().refusal_errno;
    log_event({{"event", "fault"},
               {"kind", "limits"},
               {"call", "ibv_post_send"},
               {"field", "max_inline_data"},
               {"asked", length},
               {"cap", *cap},
               {"qp_num", qp->qp_num},
               {"errno", refusal}});
    return refusal;
  }
  return 0;
}

}  // namespace faultline::transports::interpose
