#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "process_plan.hpp"

namespace faultline::transports::interpose {

/// The rules' view of a verbs completion.
Event completion_event(ibv_wc_opcode opcode, uint32_t qp_num);
/// The rules' view of a posted send work request.
Event send_event(const ibv_send_wr& wr, uint32_t qp_num);

/// Which completion faults may fire on a completion polled (null: all of them).
using FaultFilter = bool (*)(const FaultSpec&);
/// The filter for a completion of `opcode` (`extended`: an extended CQ, which cannot hand a
/// completion out twice): a data fault on a send or RDMA write was applied when it was posted
/// (SentDataChange), not when it completed.
FaultFilter completion_filter(ibv_wc_opcode opcode, bool extended);

/// The bytes of a list of SGEs.
uint64_t sge_bytes(const ibv_sge* list, int count);
/// An SGE's bytes, as the fault language's field readers take a piece of a message.
inline std::byte* sge_address(const ibv_sge& sge) {
  return reinterpret_cast<std::byte*>(sge.addr);  // NOLINT(performance-no-int-to-ptr)
}
inline uint64_t sge_length(const ibv_sge& sge) { return sge.length; }

/// The key receives are recorded under: the QP's number, or its SRQ when it has one.
uint64_t receive_queue_of_qp(ibv_qp* qp);
uint64_t receive_queue_of_srq(ibv_srq* srq);
uint64_t receive_queue_of(ibv_context* context, uint32_t qp_num);

/// Records a chain of receives for the data rules (only while the plan has some).
void record_receives(uint64_t queue, const ibv_recv_wr* wr);

/// Records the RDMA reads of a chain of sends for the data rules (only while the plan has
/// some): a read's data faults change the bytes it brought back.
void record_reads(const ibv_qp* qp, const ibv_send_wr* wr);

/// What a fired completion rule does beyond the status: the data a receive or read delivered
/// (not of a write with immediate: its bytes are not in the receive, SentDataChange changes
/// them at the writer), and the QP moved to the error state. Returns the details the fault's
/// log line carries.
nlohmann::json apply_side_effects(const FiredFault& rule, ibv_context* context, uint32_t qp_num,
                                  uint64_t wr_id, ibv_wc_opcode opcode, uint32_t byte_len);

/// Forgets a receive or read that completed without a data fault.
void forget_delivery(ibv_context* context, uint32_t qp_num, uint64_t wr_id, ibv_wc_opcode opcode);

}  // namespace faultline::transports::interpose
