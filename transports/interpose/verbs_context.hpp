#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace faultline::transports::interpose {

/// What a context's provider installed, before the interposer replaced it.
struct ContextOps {
  ibv_context* context = nullptr;
  char device[IBV_SYSFS_NAME_MAX] = {};
  int (*poll_cq)(ibv_cq*, int, ibv_wc*) = nullptr;
  int (*post_send)(ibv_qp*, ibv_send_wr*, ibv_send_wr**) = nullptr;
  int (*post_recv)(ibv_qp*, ibv_recv_wr*, ibv_recv_wr**) = nullptr;
  int (*post_srq_recv)(ibv_srq*, ibv_recv_wr*, ibv_recv_wr**) = nullptr;
  ibv_cq_ex* (*create_cq_ex)(ibv_context*, ibv_cq_init_attr_ex*) = nullptr;
  ibv_qp* (*create_qp_ex)(ibv_context*, ibv_qp_init_attr_ex*) = nullptr;
  int (*query_device_ex)(ibv_context*, const ibv_query_device_ex_input*, ibv_device_attr_ex*,
                         size_t) = nullptr;
};

/// Swaps the data-path entries of a context just opened (`how`: the call that opened it) for
/// the fault-applying ones, keeping the provider's in a ContextOps; logs `instrumented`.
void instrument_context(ibv_context* context, const char* how);

/// The provider's entries of an instrumented context (never null for one: the swap put the
/// interposer's entries there only after recording these).
const ContextOps& original_ops(ibv_context* context);

/// The QPs the program created, by number: a fault that moves a QP to the error state, and a
/// receive on an SRQ, need the QP behind a completion.
void remember_qp(ibv_qp* qp);
void forget_qp(ibv_qp* qp);
ibv_qp* qp_by_number(ibv_context* context, uint32_t qp_num);

}  // namespace faultline::transports::interpose
