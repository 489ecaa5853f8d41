#include "verbs_faults.hpp"

#include <algorithm>

#include <utility>

#include "posted_buffers.hpp"
#include "verbs_context.hpp"
#include "verbs_real.hpp"

namespace faultline::transports::interpose {

namespace {

constexpr uint64_t kSrqQueueBit = uint64_t{1} << 63;

// (tables, not switches: the enums have many more values than a fault rule can name)
constexpr std::pair<ibv_wc_opcode, transports::Opcode> kCompletionOpcodes[] = {
    {IBV_WC_SEND, transports::Opcode::kSend},
    {IBV_WC_RDMA_WRITE, transports::Opcode::kRdmaWrite},
    {IBV_WC_RDMA_READ, transports::Opcode::kRdmaRead},
    {IBV_WC_RECV, transports::Opcode::kRecv},
    {IBV_WC_RECV_RDMA_WITH_IMM, transports::Opcode::kRecvRdmaWithImm},
};

constexpr std::pair<ibv_wr_opcode, transports::Opcode> kPostOpcodes[] = {
    {IBV_WR_SEND, transports::Opcode::kSend},
    {IBV_WR_SEND_WITH_IMM, transports::Opcode::kSendWithImm},
    {IBV_WR_RDMA_WRITE, transports::Opcode::kRdmaWrite},
    {IBV_WR_RDMA_WRITE_WITH_IMM, transports::Opcode::kRdmaWriteWithImm},
    {IBV_WR_RDMA_READ, transports::Opcode::kRdmaRead},
};

template <typename Native, size_t N>
std::optional<transports::Opcode> opcode_of(
    Native native, const std::pair<Native, transports::Opcode> (&table)[N]) {
  for (const auto& [from, to] : table)
    if (from == native) return to;
  return std::nullopt;
}

void move_to_error(ibv_qp* qp) {
  static auto* modify = real_verbs<decltype(ibv_modify_qp)>("ibv_modify_qp");
  if (modify == nullptr || qp == nullptr) return;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  modify(qp, &attr, IBV_QP_STATE);
}

}  // namespace

Event completion_event(ibv_wc_opcode opcode, uint32_t qp_num) {
  Event event;
  event.side = (opcode & IBV_WC_RECV) != 0 ? Side::kRecv : Side::kSend;
  event.opcode = opcode_of(opcode, kCompletionOpcodes);
  event.qp_num = qp_num;
  return event;
}

Event send_event(const ibv_send_wr& wr, uint32_t qp_num) {
  Event event;
  event.side = Side::kSend;
  event.opcode = opcode_of(wr.opcode, kPostOpcodes);
  event.qp_num = qp_num;
  return event;
}

FaultFilter completion_filter(ibv_wc_opcode opcode, bool extended) {
  const bool data_at_post = opcode == IBV_WC_SEND || opcode == IBV_WC_RDMA_WRITE;
  if (extended && data_at_post)
    return [](const FaultSpec& f) {
      return !f.info().effect.duplicate && !f.info().effect.change_data;
    };
  if (extended) return [](const FaultSpec& f) { return !f.info().effect.duplicate; };
  if (data_at_post) return [](const FaultSpec& f) { return !f.info().effect.change_data; };
  return nullptr;
}

uint64_t sge_bytes(const ibv_sge* list, int count) {
  uint64_t bytes = 0;
  for (int i = 0; i < count; ++i) bytes += list[i].length;
  return bytes;
}

uint64_t receive_queue_of_qp(ibv_qp* qp) {
  return qp->srq != nullptr ? receive_queue_of_srq(qp->srq) : qp->qp_num;
}

uint64_t receive_queue_of_srq(ibv_srq* srq) {
  return reinterpret_cast<uintptr_t>(srq) | kSrqQueueBit;
}

uint64_t receive_queue_of(ibv_context* context, uint32_t qp_num) {
  ibv_qp* qp = qp_by_number(context, qp_num);
  return qp != nullptr ? receive_queue_of_qp(qp) : qp_num;
}

namespace {

constexpr uint64_t kReadQueueBit = uint64_t{1} << 62;

// Where the buffers a completion consumed were recorded: a receive's queue (a write with
// immediate consumes a receive too), or the QP's reads.
std::optional<uint64_t> delivery_queue(ibv_context* context, uint32_t qp_num,
                                       ibv_wc_opcode opcode) {
  if (opcode == IBV_WC_RDMA_READ) return qp_num | kReadQueueBit;
  if ((opcode & IBV_WC_RECV) != 0) return receive_queue_of(context, qp_num);
  return std::nullopt;
}

template <typename WorkRequest>
void record_delivery(uint64_t queue, const WorkRequest& wr, bool snapshot) {
  std::vector<Segment> segments;
  segments.reserve(static_cast<size_t>(std::max(wr.num_sge, 0)));
  for (int i = 0; i < wr.num_sge; ++i) {
    // The verbs ABI carries a buffer's address as an integer.
    auto* address =
        reinterpret_cast<std::byte*>(wr.sg_list[i].addr);  // NOLINT(performance-no-int-to-ptr)
    segments.push_back(Segment{address, wr.sg_list[i].length});
  }
  PostedBuffers::get().record(queue, wr.wr_id, std::move(segments), snapshot);
}

}  // namespace

void record_receives(uint64_t queue, const ibv_recv_wr* wr) {
  const bool snapshot = Plan::get().has_suppress_rules();
  for (; wr != nullptr; wr = wr->next) record_delivery(queue, *wr, snapshot);
}

void record_reads(const ibv_qp* qp, const ibv_send_wr* wr) {
  const bool snapshot = Plan::get().has_suppress_rules();
  for (; wr != nullptr; wr = wr->next)
    if (wr->opcode == IBV_WR_RDMA_READ) record_delivery(qp->qp_num | kReadQueueBit, *wr, snapshot);
}

nlohmann::json apply_side_effects(const FiredFault& rule, ibv_context* context, uint32_t qp_num,
                                  uint64_t wr_id, ibv_wc_opcode opcode, uint32_t byte_len) {
  nlohmann::json details = {{"layer", "verbs"},
                            {"device", original_ops(context).device},
                            {"qp_num", qp_num},
                            {"wr_id", wr_id}};
  if (opcode == IBV_WC_RECV_RDMA_WITH_IMM && rule.data != DataAction::kKeep) {
    forget_delivery(context, qp_num, wr_id, opcode);
    details["bytes_changed"] = 0;
    details["data_elsewhere"] =
        "an RDMA write with immediate puts its bytes where the writer chose, not in this "
        "receive: nothing the program reads was changed (side=send changes them at the writer)";
  } else if (auto queue = delivery_queue(context, qp_num, opcode);
             queue && rule.data != DataAction::kKeep) {
    // A read's completion carries no length: the whole of its buffers.
    const size_t delivered = opcode == IBV_WC_RDMA_READ ? SIZE_MAX : byte_len;
    details.update(data_effect(PostedBuffers::get().apply(*queue, wr_id, rule.data, delivered)));
  } else {
    forget_delivery(context, qp_num, wr_id, opcode);
  }
  if (rule.qp_error) {
    move_to_error(qp_by_number(context, qp_num));
    details["qp_state"] = "ERR";
  }
  return details;
}

void forget_delivery(ibv_context* context, uint32_t qp_num, uint64_t wr_id, ibv_wc_opcode opcode) {
  if (!Plan::get().has_data_rules()) return;
  if (auto queue = delivery_queue(context, qp_num, opcode))
    PostedBuffers::get().forget(*queue, wr_id);
}

}  // namespace faultline::transports::interpose
