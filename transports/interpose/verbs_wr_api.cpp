#include "verbs_wr_api.hpp"

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "call_sites.hpp"
#include "event_log.hpp"
#include "progress.hpp"
#include "verbs_inline.hpp"
#include "verbs_limits.hpp"
#include "verbs_real.hpp"
#include "verbs_segments.hpp"
#include "verbs_sent_data.hpp"

namespace faultline::transports::interpose {

namespace {

struct QpExState {
  ibv_qp* qp = nullptr;
  ibv_qp_ex provider{};                      // the provider's entries, as they were before the wrap
  std::optional<transports::Opcode> opcode;  // of the request being built, until its data
  int pending_errno = 0;  // an inline above the cap: wr_complete refuses the batch
  bool announced = false;
};

// Extended QPs are created rarely: a map under a lock finds their state.
std::mutex state_mutex;
std::map<ibv_qp_ex*, QpExState> qp_states;

QpExState& qp_state(ibv_qp_ex* qp) {
  std::lock_guard lock(state_mutex);
  return qp_states[qp];
}

Event send_of(ibv_qp_ex* qp, const QpExState& state) {
  Event event;
  event.side = Side::kSend;
  event.qp_num = qp->qp_base.qp_num;
  event.opcode = state.opcode;
  return event;
}

// A request of an opcode the faults name begins: its opcode is kept for its data. One with
// immediate data is observed (port-check) and, where the target has none, refuses the batch at
// ibv_wr_complete.
template <auto Entry, transports::Opcode kOpcode, typename... Args>
void begin_request(ibv_qp_ex* qp, Args... args) {
  QpExState& state = qp_state(qp);
  state.opcode = kOpcode;
  if constexpr (kOpcode == transports::Opcode::kSendWithImm ||
                kOpcode == transports::Opcode::kRdmaWriteWithImm) {
    const bool send = kOpcode == transports::Opcode::kSendWithImm;
    const int refused =
        check_opcode(state.qp, send ? IBV_WR_SEND_WITH_IMM : IBV_WR_RDMA_WRITE_WITH_IMM,
                     send ? "ibv_wr_send_imm" : "ibv_wr_rdma_write_imm");
    if (refused != 0 && state.pending_errno == 0) state.pending_errno = refused;
  }
  (state.provider.*Entry)(qp, args...);
}

// A request of any other opcode (atomics, binds, invalidations): its SGE is left alone.
template <auto Entry, typename... Args>
void begin_other_request(ibv_qp_ex* qp, Args... args) {
  QpExState& state = qp_state(qp);
  state.opcode.reset();
  (state.provider.*Entry)(qp, args...);
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
  state.provider.wr_start(qp);
}

// The SGEs of the request being built, with the plan's segment_count and data faults applied,
// handed to the provider (which copies them into the request at once).
void set_sges(ibv_qp_ex* qp, QpExState& state, std::span<const ibv_sge> sges, const char* call) {
  const Event event = send_of(qp, state);
  state.opcode.reset();
  if (event.opcode && Plan::get().maps_sites())
    note_site(event, call, false, static_cast<int>(sges.size()));
  std::optional<std::vector<ibv_sge>> segments;
  if (event.opcode)
    segments = changed_segments(event, sges, {{"call", call}, {"wr_id", qp->wr_id}});
  std::span<const ibv_sge> posted = segments ? std::span<const ibv_sge>(*segments) : sges;
  auto data = changed_sent_data(state.qp, event, qp->wr_id, posted, call);
  if (data) posted = *data;
  if (posted.size() != 1 && state.provider.wr_set_sge_list != nullptr) {
    state.provider.wr_set_sge_list(qp, posted.size(), posted.data());
    return;
  }
  // A provider without SGE lists: one SGE, or none (`fewer` of one) as one of no bytes.
  const ibv_sge& one = !posted.empty() ? posted[0] : sges[0];
  state.provider.wr_set_sge(qp, one.lkey, one.addr, posted.empty() ? 0 : one.length);
}

// `inline: off` on an inline send of the ibv_wr_* API: its bytes through the lkey of the
// registration holding them; true when it was changed (or refused: from no registration).
bool inline_cleared(ibv_qp_ex* qp, QpExState& state, void* address, size_t length) {
  nlohmann::json details = {{"call", "ibv_wr_set_inline_data"}};
  auto fired = inline_fault_for(state.qp, send_of(qp, state), true, length, details);
  if (!fired) return false;
  const auto lkey = registered_lkey(reinterpret_cast<uint64_t>(address), length);
  if (!lkey) {
    log_unregistered(*fired, std::move(details));
    if (state.pending_errno == 0) state.pending_errno = EINVAL;
    return false;
  }
  log_fault(*fired, std::move(details));
  state.opcode.reset();
  state.provider.wr_set_sge(qp, *lkey, reinterpret_cast<uint64_t>(address),
                            static_cast<uint32_t>(length));
  return true;
}

// `inline: force` or `above_limit` on a send of one SGE: its bytes posted inline instead;
// otherwise the SGE with the segment_count and data faults.
void wr_set_sge_with_faults(ibv_qp_ex* qp, uint32_t lkey, uint64_t address, uint32_t length) {
  QpExState& state = qp_state(qp);
  nlohmann::json details = {{"call", "ibv_wr_set_sge"}};
  auto fired = inline_fault_for(state.qp, send_of(qp, state), false, length, details);
  if (!fired || state.provider.wr_set_inline_data == nullptr) {
    const ibv_sge sge{address, length, lkey};
    set_sges(qp, state, std::span<const ibv_sge>(&sge, 1), "ibv_wr_set_sge");
    return;
  }
  log_fault(*fired, std::move(details));
  state.opcode.reset();
  // NOLINTNEXTLINE(performance-no-int-to-ptr): the program's own address, as it gave it
  state.provider.wr_set_inline_data(qp, reinterpret_cast<void*>(address), length);
}

void wr_set_sge_list_with_faults(ibv_qp_ex* qp, size_t count, const ibv_sge* list) {
  set_sges(qp, qp_state(qp), std::span<const ibv_sge>(list, count), "ibv_wr_set_sge_list");
}

void wr_set_inline_data_with_faults(ibv_qp_ex* qp, void* address, size_t length) {
  QpExState& state = qp_state(qp);
  if (Plan::get().maps_sites()) note_site(send_of(qp, state), "ibv_wr_set_inline_data", true, 1);
  if (state.provider.wr_set_sge != nullptr && inline_cleared(qp, state, address, length)) return;
  state.opcode.reset();
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
  state.provider.wr_set_inline_data(qp, address, length);
}

int wr_complete_with_faults(ibv_qp_ex* qp) {
  QpExState& state = qp_state(qp);
  if (state.pending_errno != 0) {
    state.provider.wr_abort(qp);
    return state.pending_errno;
  }
  Event event = send_of(qp, state);
  event.opcode.reset();  // a batch of requests
  if (Plan::get().maps_sites()) note_site(event, "ibv_wr_complete");
  auto rule = Plan::get().post_fault(event);
  if (!rule) {
    const int posted = state.provider.wr_complete(qp);
    if (posted == 0) note_progress();
    return posted;
  }
  state.provider.wr_abort(qp);
  log_fault(*rule, {{"call", "ibv_wr_complete"},
                    {"layer", "verbs"},
                    {"qp_num", event.qp_num.value()},
                    {"errno", rule->error_number},
                    {"error", std::strerror(rule->error_number)}});
  return rule->error_number;
}

// Replaces entry `field` of `qp` with `wrapper` where the provider has it.
template <typename Entry>
void wrap(Entry& field, std::type_identity_t<Entry> wrapper) {
  if (field != nullptr) field = wrapper;
}

void wrap_opcodes(ibv_qp_ex* qp) {
  using transports::Opcode;
  wrap(qp->wr_send, begin_request<&ibv_qp_ex::wr_send, Opcode::kSend>);
  wrap(qp->wr_send_imm, begin_request<&ibv_qp_ex::wr_send_imm, Opcode::kSendWithImm>);
  wrap(qp->wr_rdma_write, begin_request<&ibv_qp_ex::wr_rdma_write, Opcode::kRdmaWrite>);
  wrap(qp->wr_rdma_write_imm,
       begin_request<&ibv_qp_ex::wr_rdma_write_imm, Opcode::kRdmaWriteWithImm>);
  wrap(qp->wr_rdma_read, begin_request<&ibv_qp_ex::wr_rdma_read, Opcode::kRdmaRead>);
  wrap(qp->wr_atomic_cmp_swp, begin_other_request<&ibv_qp_ex::wr_atomic_cmp_swp>);
  wrap(qp->wr_atomic_fetch_add, begin_other_request<&ibv_qp_ex::wr_atomic_fetch_add>);
  wrap(qp->wr_atomic_write, begin_other_request<&ibv_qp_ex::wr_atomic_write>);
  wrap(qp->wr_bind_mw, begin_other_request<&ibv_qp_ex::wr_bind_mw>);
  wrap(qp->wr_local_inv, begin_other_request<&ibv_qp_ex::wr_local_inv>);
  wrap(qp->wr_send_inv, begin_other_request<&ibv_qp_ex::wr_send_inv>);
  wrap(qp->wr_send_tso, begin_other_request<&ibv_qp_ex::wr_send_tso>);
}

}  // namespace

void wrap_qp_ex(ibv_qp* qp) {
  static auto* to_qp_ex = real_verbs<decltype(ibv_qp_to_qp_ex)>("ibv_qp_to_qp_ex");
  ibv_qp_ex* extended = to_qp_ex != nullptr ? to_qp_ex(qp) : nullptr;
  if (extended == nullptr || extended->wr_complete == nullptr) return;
  QpExState& state = qp_state(extended);
  state = QpExState{};
  state.qp = qp;
  state.provider = *extended;
  extended->wr_start = wr_start_with_faults;
  extended->wr_complete = wr_complete_with_faults;
  const Plan& plan = Plan::get();
  const bool inline_faults = plan.has(FaultKind::kInline);
  const bool sge_faults = plan.has(FaultKind::kSegmentCount) ||
                          plan.has(FaultKind::kRewriteField) || plan.has_data_rules() ||
                          plan.maps_sites();
  const bool opcode_checks = plan.has(FaultKind::kObserve) || !plan.caps().operations.names.empty();
  if (inline_faults || sge_faults || opcode_checks) wrap_opcodes(extended);
  if (plan.caps().max_inline_data || inline_faults || plan.maps_sites())
    wrap(extended->wr_set_inline_data, wr_set_inline_data_with_faults);
  if (inline_faults || sge_faults) wrap(extended->wr_set_sge, wr_set_sge_with_faults);
  if (sge_faults) wrap(extended->wr_set_sge_list, wr_set_sge_list_with_faults);
}

}  // namespace faultline::transports::interpose
