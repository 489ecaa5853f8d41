#include "verbs_extended.hpp"

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "event_log.hpp"
#include "verbs_context.hpp"
#include "verbs_data_path.hpp"
#include "verbs_faults.hpp"
#include "verbs_inline.hpp"
#include "verbs_limits.hpp"
#include "verbs_real.hpp"

namespace faultline::transports::interpose {

namespace {

struct CqExState {
  ibv_context* context = nullptr;
  int (*start_poll)(ibv_cq_ex*, ibv_poll_cq_attr*) = nullptr;
  int (*next_poll)(ibv_cq_ex*) = nullptr;
  void (*end_poll)(ibv_cq_ex*) = nullptr;
  uint32_t (*read_vendor_err)(ibv_cq_ex*) = nullptr;
  bool faulted = false;  // the entry the program is looking at was rewritten
  uint32_t vendor_err = 0;
};

struct QpExState {
  ibv_qp* qp = nullptr;
  void (*wr_start)(ibv_qp_ex*) = nullptr;
  int (*wr_complete)(ibv_qp_ex*) = nullptr;
  void (*wr_abort)(ibv_qp_ex*) = nullptr;
  void (*wr_set_inline_data)(ibv_qp_ex*, void*, size_t) = nullptr;
  void (*wr_set_sge)(ibv_qp_ex*, uint32_t, uint64_t, uint32_t) = nullptr;
  int pending_errno = 0;  // an inline above the cap: wr_complete refuses the batch
  bool announced = false;
};

// Extended objects are created rarely: a map under a lock finds their state.
std::mutex state_mutex;
std::map<ibv_cq_ex*, CqExState> cq_states;
std::map<ibv_qp_ex*, QpExState> qp_states;

CqExState& cq_state(ibv_cq_ex* cq) {
  std::lock_guard lock(state_mutex);
  return cq_states[cq];
}

QpExState& qp_state(ibv_qp_ex* qp) {
  std::lock_guard lock(state_mutex);
  return qp_states[qp];
}

bool extended_cq_kind(const FaultSpec& fault) { return !fault.info().effect.duplicate; }

// Applies the rules to the entry the CQ is at; true when it was dropped.
bool apply_to_current(ibv_cq_ex* cq, CqExState& state) {
  state.faulted = false;
  if (cq->status != IBV_WC_SUCCESS) return false;
  const auto opcode = ibv_wc_read_opcode(cq);
  const uint32_t qp_num = cq->read_qp_num != nullptr ? ibv_wc_read_qp_num(cq) : 0;
  const bool receive = (opcode & IBV_WC_RECV) != 0;
  auto rule = Plan::get().completion_fault(completion_event(opcode, qp_num), extended_cq_kind);
  if (!rule) {
    if (receive) forget_receive(state.context, qp_num, cq->wr_id);
    return false;
  }
  const uint32_t byte_len = cq->read_byte_len != nullptr ? ibv_wc_read_byte_len(cq) : 0;
  auto details = apply_side_effects(*rule, state.context, qp_num, cq->wr_id, opcode, byte_len);
  details["call"] = "ibv_start_poll/ibv_next_poll";
  if (rule->info().effect.rewrite_status) {
    cq->status = static_cast<ibv_wc_status>(rule->status);
    state.faulted = true;
    state.vendor_err = rule->vendor_err != 0 ? rule->vendor_err : kInjectedVendorErr;
  }
  log_fault(*rule, std::move(details));
  return rule->info().effect.drop;
}

int next_poll_with_faults(ibv_cq_ex* cq) {
  CqExState& state = cq_state(cq);
  int polled = state.next_poll(cq);
  while (polled == 0 && apply_to_current(cq, state)) polled = state.next_poll(cq);
  return polled;
}

int start_poll_with_faults(ibv_cq_ex* cq, ibv_poll_cq_attr* attr) {
  CqExState& state = cq_state(cq);
  int polled = state.start_poll(cq, attr);
  if (polled != 0 || !apply_to_current(cq, state)) return polled;
  polled = next_poll_with_faults(cq);
  // The only entry was dropped: the program must not see an open poll with nothing in it.
  if (polled == ENOENT) state.end_poll(cq);
  return polled;
}

uint32_t read_vendor_err_with_faults(ibv_cq_ex* cq) {
  CqExState& state = cq_state(cq);
  return state.faulted ? state.vendor_err : state.read_vendor_err(cq);
}

void wr_start_with_faults(ibv_qp_ex* qp) {
  QpExState& state = qp_state(qp);
  if (!state.announced) {
    state.announced = true;
    log_event({{"event", "instrumented"},
               {"object", "qp_ex"},
               {"api", "ibv_wr"},
               {"layer", "verbs"},
               {"qp_num", qp->qp_base.qp_num}});
  }
  state.pending_errno = 0;
  state.wr_start(qp);
}

Event send_of(ibv_qp_ex* qp) {
  Event event;
  event.side = Side::kSend;
  event.qp_num = qp->qp_base.qp_num;
  return event;
}

// `inline: off` on an inline send of the ibv_wr_* API: its bytes through the lkey of the
// registration holding them; true when it was changed (or refused: from no registration).
bool inline_cleared(ibv_qp_ex* qp, QpExState& state, void* address, size_t length) {
  nlohmann::json details = {{"call", "ibv_wr_set_inline_data"}};
  auto fired = inline_fault_for(state.qp, send_of(qp), true, length, details);
  if (!fired) return false;
  const auto lkey = registered_lkey(reinterpret_cast<uint64_t>(address), length);
  if (!lkey) {
    log_unregistered(*fired, std::move(details));
    if (state.pending_errno == 0) state.pending_errno = EINVAL;
    return false;
  }
  log_fault(*fired, std::move(details));
  state.wr_set_sge(qp, *lkey, reinterpret_cast<uint64_t>(address), static_cast<uint32_t>(length));
  return true;
}

// `inline: force` or `above_limit` on a send of one SGE: its bytes posted inline instead.
void wr_set_sge_with_faults(ibv_qp_ex* qp, uint32_t lkey, uint64_t address, uint32_t length) {
  QpExState& state = qp_state(qp);
  nlohmann::json details = {{"call", "ibv_wr_set_sge"}};
  auto fired = inline_fault_for(state.qp, send_of(qp), false, length, details);
  if (!fired || state.wr_set_inline_data == nullptr) {
    state.wr_set_sge(qp, lkey, address, length);
    return;
  }
  log_fault(*fired, std::move(details));
  // NOLINTNEXTLINE(performance-no-int-to-ptr): the program's own address, as it gave it
  state.wr_set_inline_data(qp, reinterpret_cast<void*>(address), length);
}

void wr_set_inline_data_with_faults(ibv_qp_ex* qp, void* address, size_t length) {
  QpExState& state = qp_state(qp);
  if (state.wr_set_sge != nullptr && inline_cleared(qp, state, address, length)) return;
  const auto cap = Plan::get().caps().max_inline_data;
  if (cap && length > *cap && state.pending_errno == 0) {
    state.pending_errno = EINVAL;
    log_event({{"event", "fault"},
               {"kind", "limits"},
               {"call", "ibv_wr_set_inline_data"},
               {"field", "max_inline_data"},
               {"asked", length},
               {"cap", *cap},
               {"qp_num", qp->qp_base.qp_num},
               {"errno", EINVAL}});
  }
  state.wr_set_inline_data(qp, address, length);
}

int wr_complete_with_faults(ibv_qp_ex* qp) {
  QpExState& state = qp_state(qp);
  if (state.pending_errno != 0) {
    state.wr_abort(qp);
    return state.pending_errno;
  }
  const Event event = send_of(qp);
  auto rule = Plan::get().post_fault(event);
  if (!rule) return state.wr_complete(qp);
  state.wr_abort(qp);
  log_fault(*rule, {{"call", "ibv_wr_complete"},
                    {"layer", "verbs"},
                    {"qp_num", event.qp_num.value()},
                    {"errno", rule->error_number},
                    {"error", std::strerror(rule->error_number)}});
  return rule->error_number;
}

void wrap_qp_ex(ibv_qp* qp) {
  static auto* to_qp_ex = real_verbs<decltype(ibv_qp_to_qp_ex)>("ibv_qp_to_qp_ex");
  ibv_qp_ex* extended = to_qp_ex != nullptr ? to_qp_ex(qp) : nullptr;
  if (extended == nullptr || extended->wr_complete == nullptr) return;
  QpExState& state = qp_state(extended);
  state = QpExState{};
  state.qp = qp;
  state.wr_start = extended->wr_start;
  state.wr_complete = extended->wr_complete;
  state.wr_abort = extended->wr_abort;
  state.wr_set_inline_data = extended->wr_set_inline_data;
  state.wr_set_sge = extended->wr_set_sge;
  extended->wr_start = wr_start_with_faults;
  extended->wr_complete = wr_complete_with_faults;
  const bool inline_faults = Plan::get().has(FaultKind::kInline);
  if (extended->wr_set_inline_data != nullptr &&
      (Plan::get().caps().max_inline_data || inline_faults))
    extended->wr_set_inline_data = wr_set_inline_data_with_faults;
  if (extended->wr_set_sge != nullptr && inline_faults)
    extended->wr_set_sge = wr_set_sge_with_faults;
}

void wrap_cq_ex(ibv_cq_ex* cq, ibv_context* context) {
  CqExState& state = cq_state(cq);
  state = CqExState{};
  state.context = context;
  state.start_poll = cq->start_poll;
  state.next_poll = cq->next_poll;
  state.end_poll = cq->end_poll;
  state.read_vendor_err = cq->read_vendor_err;
  cq->start_poll = start_poll_with_faults;
  cq->next_poll = next_poll_with_faults;
  cq->read_vendor_err = read_vendor_err_with_faults;
}

}  // namespace

ibv_cq_ex* create_cq_ex_with_faults(ibv_context* context, ibv_cq_init_attr_ex* attr) {
  if (refuse_cq_size(static_cast<int>(attr->cqe), "ibv_create_cq_ex", context) != 0) return nullptr;
  ibv_cq_ex* cq = original_ops(context).create_cq_ex(context, attr);
  observe_cq_request(static_cast<int>(attr->cqe), "ibv_create_cq_ex", context, cq != nullptr);
  if (cq == nullptr) return nullptr;
  log_event({{"event", "instrumented"},
             {"object", "cq_ex"},
             {"layer", "verbs"},
             {"device", original_ops(context).device}});
  if (Plan::get().has_completion_rules()) wrap_cq_ex(cq, context);
  return cq;
}

ibv_qp* create_qp_ex_with_faults(ibv_context* context, ibv_qp_init_attr_ex* attr) {
  if (refuse_qp_caps(attr->cap, "ibv_create_qp_ex", context) != 0) return nullptr;
  const ibv_qp_cap asked = attr->cap;
  ibv_qp* qp = create_with_inline_room(attr->cap, "ibv_create_qp_ex", [&] {
    return original_ops(context).create_qp_ex(context, attr);
  });
  observe_qp_request(asked, "ibv_create_qp_ex", context, qp != nullptr);
  if (qp == nullptr) return nullptr;
  clamp_qp_caps(attr->cap);
  remember_qp(qp);
  if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0) wrap_qp_ex(qp);
  return qp;
}

int query_device_ex_with_caps(ibv_context* context, const ibv_query_device_ex_input* input,
                              ibv_device_attr_ex* attr, size_t attr_size) {
  const int queried = original_ops(context).query_device_ex(context, input, attr, attr_size);
  if (queried == 0) clamp_device_attr(attr->orig_attr, "ibv_query_device_ex", context);
  return queried;
}

}  // namespace faultline::transports::interpose
