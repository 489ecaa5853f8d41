#include "verbs_extended.hpp"

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "call_sites.hpp"
#include "event_log.hpp"
#include "progress.hpp"
#include "verbs_context.hpp"
#include "verbs_data_path.hpp"
#include "verbs_faults.hpp"
#include "verbs_inline.hpp"
#include "verbs_limits.hpp"
#include "verbs_objects.hpp"
#include "verbs_real.hpp"
#include "verbs_sent_data.hpp"
#include "verbs_wr_api.hpp"

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

// Extended CQs are created rarely: a map under a lock finds their state.
std::mutex state_mutex;
std::map<ibv_cq_ex*, CqExState> cq_states;

CqExState& cq_state(ibv_cq_ex* cq) {
  std::lock_guard lock(state_mutex);
  return cq_states[cq];
}

// Applies the rules to the entry the CQ is at; true when it was dropped.
bool apply_to_current(ibv_cq_ex* cq, CqExState& state) {
  state.faulted = false;
  if (cq->status != IBV_WC_SUCCESS) return false;
  const auto opcode = ibv_wc_read_opcode(cq);
  const uint32_t qp_num = cq->read_qp_num != nullptr ? ibv_wc_read_qp_num(cq) : 0;
  if ((opcode & IBV_WC_RECV) == 0) release_sent_copies(state.context, qp_num, cq->wr_id);
  const Event event = completion_event(opcode, qp_num);
  if (Plan::get().maps_sites()) note_site(event, "ibv_start_poll/ibv_next_poll");
  auto rule = Plan::get().completion_fault(event, completion_filter(opcode, true));
  if (!rule) {
    forget_delivery(state.context, qp_num, cq->wr_id, opcode);
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
  if (polled == 0) note_progress();
  return polled;
}

int start_poll_with_faults(ibv_cq_ex* cq, ibv_poll_cq_attr* attr) {
  CqExState& state = cq_state(cq);
  int polled = state.start_poll(cq, attr);
  if (polled != 0) return polled;
  if (!apply_to_current(cq, state)) {
    note_progress();
    return polled;
  }
  polled = next_poll_with_faults(cq);
  // The only entry was dropped: the program must not see an open poll with nothing in it.
  if (polled == ENOENT) state.end_poll(cq);
  return polled;
}

uint32_t read_vendor_err_with_faults(ibv_cq_ex* cq) {
  CqExState& state = cq_state(cq);
  return state.faulted ? state.vendor_err : state.read_vendor_err(cq);
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
  if (refuse_one_more(VerbsObject::kCq, "ibv_create_cq_ex", context) != 0) return nullptr;
  ibv_cq_ex* cq = original_ops(context).create_cq_ex(context, attr);
  observe_cq_request(static_cast<int>(attr->cqe), "ibv_create_cq_ex", context, cq != nullptr);
  if (cq == nullptr) return nullptr;
  note_created(VerbsObject::kCq, "ibv_create_cq_ex", context);
  log_event({{"event", "instrumented"},
             {"object", "cq_ex"},
             {"layer", "verbs"},
             {"device", original_ops(context).device}});
  if (Plan::get().has_completion_rules()) wrap_cq_ex(cq, context);
  return cq;
}

ibv_qp* create_qp_ex_with_faults(ibv_context* context, ibv_qp_init_attr_ex* attr) {
  if (refuse_qp_caps(attr->cap, attr->qp_type, "ibv_create_qp_ex", context) != 0) return nullptr;
  if (refuse_one_more(VerbsObject::kQp, "ibv_create_qp_ex", context) != 0) return nullptr;
  const ibv_qp_cap asked = attr->cap;
  ibv_qp* qp = create_with_inline_room(attr->cap, "ibv_create_qp_ex", [&] {
    return original_ops(context).create_qp_ex(context, attr);
  });
  observe_qp_request(asked, attr->qp_type, "ibv_create_qp_ex", context, qp != nullptr);
  if (qp == nullptr) return nullptr;
  note_created(VerbsObject::kQp, "ibv_create_qp_ex", context);
  clamp_qp_caps(attr->cap, "ibv_create_qp_ex");
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
