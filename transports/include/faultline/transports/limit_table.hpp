#pragma once

#include <optional>

// The one list of device limits. DeviceLimits, the `limits` fault of the fault language, the
// device profiles' check and both appliers (the fault decorator, the verbs interposer) are all
// made from these rows; a new limit is one row here plus its enforcement.
//
// X(name, type in DeviceLimits, which interposers hold a program to it: kByVerbs, kByOfi)
// An optional type is a limit a transport may not advertise (libfabric has no CQ depth).
#define FAULTLINE_DEVICE_LIMITS(X)                                                          \
  X(max_qp_wr, uint32_t, kByVerbs | kByOfi)       /* send queue depth (tx_attr->size) */    \
  X(max_recv_wr, uint32_t, kByVerbs | kByOfi)     /* receive queue depth (rx_attr->size) */ \
  X(max_cqe, std::optional<uint32_t>, kByVerbs)   /* completion queue depth */              \
  X(max_send_sge, uint32_t, kByVerbs | kByOfi)    /* segments per send (tx iov_limit) */    \
  X(max_recv_sge, uint32_t, kByVerbs | kByOfi)    /* segments per receive (rx iov_limit) */ \
  X(max_sge_rd, uint32_t, kByOfi)                 /* per RDMA read (tx rma_iov_limit) */    \
  X(max_inline_data, uint32_t, kByVerbs | kByOfi) /* inline / inject bytes (inject_size) */ \
  X(max_msg_size, uint64_t, kByOfi)               /* ep_attr->max_msg_size */               \
  X(max_mr_size, std::optional<uint64_t>, kByVerbs)                                         \
  X(active_mtu, std::optional<uint32_t>, 0U) /* bytes */                                    \
  X(max_mtu, std::optional<uint32_t>, 0U)    /* bytes */                                    \
  /* How many of each object the device holds; a program's processes are held each to it */ \
  X(max_qp, std::optional<uint32_t>, kByVerbs)                                              \
  X(max_cq, std::optional<uint32_t>, kByVerbs)                                              \
  X(max_mr, std::optional<uint32_t>, kByVerbs)                                              \
  X(max_pd, std::optional<uint32_t>, kByVerbs)                                              \
  X(max_srq, std::optional<uint32_t>, kByVerbs)

// Limits of objects only a program's own verbs calls make (shared receive queues, the RDMA-read
// depth a QP is moved to, atomics): a target profile states them and the verbs interposer
// holds a program's creates to them; faultline's own endpoints make no such object.
// X(name, type of its cap)
#define FAULTLINE_CREATE_LIMITS(X)                                                     \
  X(max_srq_wr, uint32_t)                                                              \
  X(max_srq_sge, uint32_t)                                                             \
  X(max_qp_rd_atom, uint32_t) /* bounds a QP's max_rd_atomic and max_dest_rd_atomic */ \
  X(atomic_cap, uint32_t)     /* enum ibv_atomic_cap: 0 none, 1 within the HCA, 2 global */

namespace faultline::transports {

/// Which interposer holds a program to a limit (the third column of FAULTLINE_DEVICE_LIMITS).
inline constexpr unsigned kByVerbs = 1U << 0U;
inline constexpr unsigned kByOfi = 1U << 1U;

/// The value type of a limit's type in the table: T for T and for std::optional<T>.
template <typename T>
struct LimitValue {
  using type = T;
};
template <typename T>
struct LimitValue<std::optional<T>> {
  using type = T;
};
template <typename T>
using limit_value_t = typename LimitValue<T>::type;

}  // namespace faultline::transports
