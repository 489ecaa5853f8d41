#include "verbs_limits.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "call_stack.hpp"
#include "event_log.hpp"
#include "process_plan.hpp"
#include "verbs_faults.hpp"
#include "verbs_real.hpp"

namespace faultline::transports::interpose {

namespace {

template <typename Count>
bool above(uint64_t asked, const std::optional<Count>& cap) {
  return cap && asked > static_cast<uint64_t>(*cap);
}

int refuse(const char* call, const char* field, uint64_t asked, uint64_t cap,
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

// A QP type or opcode the target has none of, refused with its driver's errno.
int refuse_unsupported(const char* call, const char* field, const char* name, int error,
                       ibv_context* context) {
  log_event({{"event", "fault"},
             {"kind", "limits"},
             {"call", call},
             {"device", device_name(context->device)},
             {"field", field},
             {"asked", name},
             {"cap", "none on the target"},
             {"errno", error},
             {"error", std::strerror(error)}});
  errno = error;
  return error;
}

nlohmann::json srq_asked(const ibv_srq_attr& attr) {
  return {{"max_wr", attr.max_wr}, {"max_sge", attr.max_sge}};
}

// The names the device profiles use (qp_types): XRC for both of its ends, DRIVER for a
// driver's own type (EFA's SRD, mlx5's DC).
const char* qp_type_name(ibv_qp_type type) {
  switch (type) {
    case IBV_QPT_RC: return "RC";
    case IBV_QPT_UC: return "UC";
    case IBV_QPT_UD: return "UD";
    case IBV_QPT_XRC_SEND:
    case IBV_QPT_XRC_RECV: return "XRC";
    case IBV_QPT_RAW_PACKET: return "RAW_PACKET";
    case IBV_QPT_DRIVER: return "DRIVER";
  }
  return "OTHER";
}

nlohmann::json qp_asked(const ibv_qp_cap& cap, ibv_qp_type type) {
  return {{"qp_type", qp_type_name(type)},    {"max_send_wr", cap.max_send_wr},
          {"max_recv_wr", cap.max_recv_wr},   {"max_send_sge", cap.max_send_sge},
          {"max_recv_sge", cap.max_recv_sge}, {"max_inline_data", cap.max_inline_data}};
}

template <typename Count, typename Cap>
void clamp(Count& value, const std::optional<Cap>& cap) {
  if (cap && static_cast<uint64_t>(value) > *cap) value = static_cast<Count>(*cap);
}

// The largest value seen of one kind (a QP's inline sends, the process's memory regions): a
// new largest is a request worth logging, the same size again is not (the data path and
// per-message registrations stay quiet).
bool larger_than_before(const std::string& what, uint64_t value) {
  static std::mutex mutex;
  static std::unordered_map<std::string, uint64_t> largest;
  const std::lock_guard lock(mutex);
  uint64_t& seen = largest[what];
  if (value <= seen) return false;
  seen = value;
  return true;
}

uint32_t mtu_bytes(ibv_mtu mtu) { return 128U << static_cast<unsigned>(mtu); }

// What a modify asks of the device: the path MTU in bytes, the RDMA read/atomic depths, and
// (as 1) remote atomics in the access flags.
nlohmann::json modify_asked(const ibv_qp_attr& attr, int mask) {
  nlohmann::json asked = nlohmann::json::object();
  if ((mask & IBV_QP_PATH_MTU) != 0) asked["path_mtu"] = mtu_bytes(attr.path_mtu);
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) != 0) asked["max_rd_atomic"] = attr.max_rd_atomic;
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) != 0)
    asked["max_dest_rd_atomic"] = attr.max_dest_rd_atomic;
  if ((mask & IBV_QP_ACCESS_FLAGS) != 0 && (attr.qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC) != 0)
    asked["atomic"] = 1;
  return asked;
}

// The device profiles' names (operations) of the opcodes that carry immediate data.
const char* immediate_opcode_name(ibv_wr_opcode opcode) {
  if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM) return "RDMA_WRITE_WITH_IMM";
  if (opcode == IBV_WR_SEND_WITH_IMM) return "SEND_WITH_IMM";
  return nullptr;
}

bool atomic_opcode(ibv_wr_opcode opcode) {
  return opcode == IBV_WR_ATOMIC_CMP_AND_SWP || opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

}  // namespace

void log_observed_request(const char* call, ibv_context* context, nlohmann::json asked,
                          nlohmann::json granted) {
  if (!Plan::get().has(FaultKind::kObserve)) return;
  log_event({{"event", "request"},
             {"call", call},
             {"device", device_name(context->device)},
             {"asked", std::move(asked)},
             {"granted", std::move(granted)},
             {"stack", caller_stack()}});
}

int refuse_qp_caps(const ibv_qp_cap& cap, ibv_qp_type type, const char* call,
                   ibv_context* context) {
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
  // A type the target has no queue pairs of: the create fails first, as its driver fails it.
  if (const char* name = qp_type_name(type); caps.qp_types.refuses(name)) {
    log_observed_request(call, context, qp_asked(cap, type));
    return refuse_unsupported(call, "qp_type", name, caps.qp_types.error_number, context);
  }
  for (const auto& check : checks) {
    if (!above(check.asked, check.cap)) continue;
    log_observed_request(call, context, qp_asked(cap, type));
    return refuse(call, check.field, check.asked, *check.cap, context);
  }
  return 0;
}

void observe_qp_request(const ibv_qp_cap& cap, ibv_qp_type type, const char* call,
                        ibv_context* context, bool granted) {
  log_observed_request(call, context, qp_asked(cap, type), granted);
}

void observe_cq_request(int cqe, const char* call, ibv_context* context, bool granted) {
  log_observed_request(call, context, {{"cqe", cqe}}, granted);
}

int refuse_srq_attr(const ibv_srq_attr& attr, ibv_context* context) {
  const LimitCaps& caps = Plan::get().caps();
  const char* field = above(attr.max_wr, caps.max_srq_wr)     ? "max_wr"
                      : above(attr.max_sge, caps.max_srq_sge) ? "max_sge"
                                                              : nullptr;
  if (field == nullptr) return 0;
  const bool depth = std::strcmp(field, "max_wr") == 0;
  log_observed_request("ibv_create_srq", context, srq_asked(attr));
  return refuse("ibv_create_srq", field, depth ? attr.max_wr : attr.max_sge,
                depth ? *caps.max_srq_wr : *caps.max_srq_sge, context);
}

void observe_srq_request(const ibv_srq_attr& attr, ibv_context* context, bool granted) {
  log_observed_request("ibv_create_srq", context, srq_asked(attr), granted);
}

int refuse_mr_length(uint64_t length, const char* call, ibv_context* context) {
  const auto& cap = Plan::get().caps().max_mr_size;
  if (!above(length, cap)) return 0;
  log_observed_request(call, context, {{"length", length}});
  return refuse(call, "length", length, *cap, context);
}

void observe_mr_request(uint64_t length, const char* call, ibv_context* context, bool granted) {
  if (Plan::get().has(FaultKind::kObserve) && larger_than_before("mr", length))
    log_observed_request(call, context, {{"length", length}}, granted);
}

int refuse_qp_modify(const ibv_qp* qp, const ibv_qp_attr& attr, int mask) {
  const auto& cap = Plan::get().caps().max_qp_rd_atom;
  const bool initiator = (mask & IBV_QP_MAX_QP_RD_ATOMIC) != 0 && above(attr.max_rd_atomic, cap);
  const bool responder =
      (mask & IBV_QP_MAX_DEST_RD_ATOMIC) != 0 && above(attr.max_dest_rd_atomic, cap);
  if (!initiator && !responder) return 0;
  log_observed_request("ibv_modify_qp", qp->context, modify_asked(attr, mask));
  return refuse("ibv_modify_qp", initiator ? "max_rd_atomic" : "max_dest_rd_atomic",
                initiator ? attr.max_rd_atomic : attr.max_dest_rd_atomic, *cap, qp->context);
}

void observe_qp_modify(const ibv_qp* qp, const ibv_qp_attr& attr, int mask, bool granted) {
  if (!Plan::get().has(FaultKind::kObserve)) return;
  nlohmann::json asked = modify_asked(attr, mask);
  if (asked.empty()) return;
  asked["qp_num"] = qp->qp_num;
  log_observed_request("ibv_modify_qp", qp->context, std::move(asked), granted);
}

void clamp_qp_caps(ibv_qp_cap& cap, const char* create_call) {
  const LimitCaps& caps = Plan::get().caps();
  const ibv_qp_cap granted = cap;
  clamp(cap.max_send_wr, caps.max_qp_wr);
  clamp(cap.max_recv_wr, caps.max_qp_wr);
  clamp(cap.max_recv_wr, caps.max_recv_wr);
  clamp(cap.max_send_sge, caps.max_send_sge);
  clamp(cap.max_recv_sge, caps.max_recv_sge);
  clamp(cap.max_inline_data, caps.max_inline_data);
  if (create_call == nullptr) return;
  // A create granted less than the device gave (a clamped inline room, as libhns clamps): the
  // smaller device applied, as a query of it shows.
  nlohmann::json lowered = nlohmann::json::object();
  const std::pair<const char*, std::pair<uint32_t, uint32_t>> fields[] = {
      {"max_send_wr", {granted.max_send_wr, cap.max_send_wr}},
      {"max_recv_wr", {granted.max_recv_wr, cap.max_recv_wr}},
      {"max_send_sge", {granted.max_send_sge, cap.max_send_sge}},
      {"max_recv_sge", {granted.max_recv_sge, cap.max_recv_sge}},
      {"max_inline_data", {granted.max_inline_data, cap.max_inline_data}}};
  for (const auto& [name, shown] : fields)
    if (shown.first != shown.second) lowered[name] = {shown.first, shown.second};
  if (!lowered.empty())
    log_event(
        {{"event", "fault"}, {"kind", "limits"}, {"call", create_call}, {"lowered", lowered}});
}

void clamp_srq_attr(ibv_srq_attr& attr) {
  const LimitCaps& caps = Plan::get().caps();
  clamp(attr.max_wr, caps.max_srq_wr);
  clamp(attr.max_sge, caps.max_srq_sge);
}

int refuse_cq_size(int cqe, const char* call, ibv_context* context) {
  const auto& cap = Plan::get().caps().max_cqe;
  if (cqe <= 0 || !above(static_cast<uint64_t>(cqe), cap)) return 0;
  log_observed_request(call, context, {{"cqe", cqe}});
  return refuse(call, "cqe", static_cast<uint64_t>(cqe), *cap, context);
}

void clamp_device_attr(ibv_device_attr& attr, const char* call, ibv_context* context) {
  log_observed_request(call, context, nlohmann::json::object(), true);
  const LimitCaps& caps = Plan::get().caps();
  const ibv_device_attr device = attr;
  clamp(attr.max_qp_wr, caps.max_qp_wr);
  clamp(attr.max_cqe, caps.max_cqe);
  // One max_sge in the device attributes: the smaller of the two sides' caps.
  clamp(attr.max_sge, caps.max_send_sge);
  clamp(attr.max_sge, caps.max_recv_sge);
  clamp(attr.max_srq_wr, caps.max_srq_wr);
  clamp(attr.max_srq_sge, caps.max_srq_sge);
  clamp(attr.max_qp_rd_atom, caps.max_qp_rd_atom);
  clamp(attr.max_qp_init_rd_atom, caps.max_qp_rd_atom);
  clamp(attr.max_mr_size, caps.max_mr_size);
  clamp(attr.max_qp, caps.max_qp);
  clamp(attr.max_cq, caps.max_cq);
  clamp(attr.max_mr, caps.max_mr);
  clamp(attr.max_pd, caps.max_pd);
  clamp(attr.max_srq, caps.max_srq);
  if (caps.atomic_cap && *caps.atomic_cap < static_cast<uint32_t>(attr.atomic_cap))
    attr.atomic_cap = static_cast<ibv_atomic_cap>(*caps.atomic_cap);
  // Who the device says it is: the target's identity, shown as is.
  if (caps.vendor_id) attr.vendor_id = *caps.vendor_id;
  if (caps.vendor_part_id) attr.vendor_part_id = *caps.vendor_part_id;
  // The program was shown a smaller device: a fault applied (what it did then is its verdict).
  nlohmann::json lowered = nlohmann::json::object();
  if (attr.max_qp_wr != device.max_qp_wr) lowered["max_qp_wr"] = {device.max_qp_wr, attr.max_qp_wr};
  if (attr.max_cqe != device.max_cqe) lowered["max_cqe"] = {device.max_cqe, attr.max_cqe};
  if (attr.max_sge != device.max_sge) lowered["max_sge"] = {device.max_sge, attr.max_sge};
  if (attr.max_srq_wr != device.max_srq_wr)
    lowered["max_srq_wr"] = {device.max_srq_wr, attr.max_srq_wr};
  if (attr.max_srq_sge != device.max_srq_sge)
    lowered["max_srq_sge"] = {device.max_srq_sge, attr.max_srq_sge};
  if (attr.max_qp_rd_atom != device.max_qp_rd_atom)
    lowered["max_qp_rd_atom"] = {device.max_qp_rd_atom, attr.max_qp_rd_atom};
  if (attr.max_mr_size != device.max_mr_size)
    lowered["max_mr_size"] = {device.max_mr_size, attr.max_mr_size};
  const std::pair<const char*, std::pair<int, int>> counts[] = {
      {"max_qp", {device.max_qp, attr.max_qp}},
      {"max_cq", {device.max_cq, attr.max_cq}},
      {"max_mr", {device.max_mr, attr.max_mr}},
      {"max_pd", {device.max_pd, attr.max_pd}},
      {"max_srq", {device.max_srq, attr.max_srq}}};
  for (const auto& [name, shown] : counts)
    if (shown.first != shown.second) lowered[name] = {shown.first, shown.second};
  if (attr.atomic_cap != device.atomic_cap)
    lowered["atomic_cap"] = {device.atomic_cap, attr.atomic_cap};
  if (attr.vendor_id != device.vendor_id) lowered["vendor_id"] = {device.vendor_id, attr.vendor_id};
  if (attr.vendor_part_id != device.vendor_part_id)
    lowered["vendor_part_id"] = {device.vendor_part_id, attr.vendor_part_id};
  if (lowered.empty()) return;
  log_event({{"event", "fault"}, {"kind", "limits"}, {"call", call}, {"lowered", lowered}});
}

int check_opcode(ibv_qp* qp, ibv_wr_opcode opcode, const char* call) {
  const Plan& plan = Plan::get();
  const bool observing = plan.has(FaultKind::kObserve);
  // The first atomic the process posts: what a device without atomics cannot run.
  if (observing && atomic_opcode(opcode) && larger_than_before("atomic", 1))
    log_observed_request(call, qp->context, {{"atomic", 1}, {"qp_num", qp->qp_num}}, nullptr);
  const char* with_imm = immediate_opcode_name(opcode);
  if (with_imm == nullptr) return 0;
  // The first work request with immediate data of each kind: siw carries none.
  if (observing && larger_than_before(with_imm, 1))
    log_observed_request(call, qp->context, {{"opcode", with_imm}, {"qp_num", qp->qp_num}},
                         nullptr);
  const Refused& refused = plan.caps().operations;
  if (!refused.refuses(with_imm)) return 0;
  return refuse_unsupported(call, "opcode", with_imm, refused.error_number, qp->context);
}

int check_send_post(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  const Plan& plan = Plan::get();
  const auto cap = plan.caps().max_inline_data;
  const bool observing = plan.has(FaultKind::kObserve);
  if (!cap && !observing && plan.caps().operations.names.empty()) return 0;
  for (; wr != nullptr; wr = wr->next) {
    if (const int refused = check_opcode(qp, wr->opcode, "ibv_post_send"); refused != 0) {
      *bad_wr = wr;
      return refused;
    }
    if ((wr->send_flags & IBV_SEND_INLINE) == 0) continue;
    const uint64_t length = sge_bytes(wr->sg_list, wr->num_sge);
    if (observing && larger_than_before("inline " + std::to_string(qp->qp_num), length))
      log_observed_request("ibv_post_send", qp->context,
                           {{"inline_bytes", length}, {"qp_num", qp->qp_num}}, nullptr);
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
