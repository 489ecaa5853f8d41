#pragma once

#include <infiniband/verbs.h>

#include <nlohmann/json.hpp>

namespace faultline::transports::interpose {

/// Under an `observe` rule (port-check): what the program asked of the device through `call`,
/// logged as a `request` event with its call stack, for port-check to hold against targets.
/// `granted`: whether the device here gave it (a probe it refused here too is no port
/// finding); null when the plan refused it first.
void log_observed_request(const char* call, ibv_context* context, nlohmann::json asked,
                          nlohmann::json granted = nullptr);

/// Under an `observe` rule (port-check) the program's requests are logged as `request` events
/// with its call stack: a refused one here, a granted or failed one by observe_*_request.
/// The target's errno (EINVAL unless the plan names another), the refusal logged, when a QP's
/// `cap` asks more than the plan's limits allow (as a device refuses a create above its own
/// limits), or creates a `type` the target has none of (`refuse_qp_types`, with that errno);
/// 0 when it fits. An inline request the target clamps is not refused. `type` is logged with
/// the request.
int refuse_qp_caps(const ibv_qp_cap& cap, ibv_qp_type type, const char* call, ibv_context* context);
/// Logs a QP or CQ request once the device here answered it (`granted`).
void observe_qp_request(const ibv_qp_cap& cap, ibv_qp_type type, const char* call,
                        ibv_context* context, bool granted);
void observe_cq_request(int cqe, const char* call, ibv_context* context, bool granted);
/// The target's errno, logged, for an SRQ deeper or wider than the caps; 0 when it fits.
int refuse_srq_attr(const ibv_srq_attr& attr, ibv_context* context);
void observe_srq_request(const ibv_srq_attr& attr, ibv_context* context, bool granted);
/// The target's errno, logged, for a memory region above `max_mr_size`; 0 when it fits.
int refuse_mr_length(uint64_t length, const char* call, ibv_context* context);
/// Logs the process's largest memory region so far (a new largest only).
void observe_mr_request(uint64_t length, const char* call, ibv_context* context, bool granted);
/// The target's errno, logged, for a modify asking more RDMA read/atomic depth than
/// `max_qp_rd_atom`; 0 when it fits.
int refuse_qp_modify(const ibv_qp* qp, const ibv_qp_attr& attr, int mask);
/// Logs what a modify asks of the device: path MTU, read/atomic depths, remote atomics.
void observe_qp_modify(const ibv_qp* qp, const ibv_qp_attr& attr, int mask, bool granted);
/// What the program is told it was granted: no more than the caps. From a create
/// (`create_call`), what it lowered is logged as a `limits` fault (a query says the same again).
void clamp_qp_caps(ibv_qp_cap& cap, const char* create_call = nullptr);
/// What the program is told of an SRQ: no deeper or wider than the caps.
void clamp_srq_attr(ibv_srq_attr& attr);
/// EINVAL, logged, for a CQ larger than `max_cqe`; 0 when it fits.
int refuse_cq_size(int cqe, const char* call, ibv_context* context);
/// The device the program queries (through `call`) is the smaller one, with the target's
/// identity (vendor ids) where the plan gives it; what changed is logged as a limits fault,
/// each field as [the device's value, the value shown].
void clamp_device_attr(ibv_device_attr& attr, const char* call, ibv_context* context);
/// The target's errno, logged, for a work request of an opcode the target has none of
/// (`refuse_operations`); under observe, the process's first atomic and first request with
/// immediate data of each kind are logged as requests. 0 when it may be posted.
int check_opcode(ibv_qp* qp, ibv_wr_opcode opcode, const char* call);
/// The target's errno, logged, for a post of an inline send above the cap, or of an opcode
/// check_opcode refuses; under observe, the largest inline send of each QP is logged as a
/// request. 0 when it fits.
int check_send_post(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr);

}  // namespace faultline::transports::interpose
