#include "verbs_context.hpp"

#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

#include "event_log.hpp"
#include "process_plan.hpp"
#include "verbs_data_path.hpp"
#include "verbs_extended.hpp"
#include "verbs_real.hpp"

namespace faultline::transports::interpose {

namespace {

// Contexts are few (one per device a program opens); a fixed table read without a lock keeps
// the data path's lookup to a short scan. A reopened context at the same address reuses its
// slot.
constexpr size_t kMaxContexts = 256;
std::array<ContextOps, kMaxContexts> contexts;
std::atomic<size_t> context_count{0};
std::mutex registry_mutex;

std::mutex qp_mutex;
std::map<std::pair<ibv_context*, uint32_t>, ibv_qp*> qps;

ContextOps* slot_for(ibv_context* context) {
  const size_t count = context_count.load(std::memory_order_acquire);
  for (size_t i = 0; i < count; ++i)
    if (contexts[i].context == context) return &contexts[i];
  if (count == kMaxContexts) return nullptr;
  context_count.store(count + 1, std::memory_order_release);
  return &contexts[count];
}

void swap_extended(ibv_context* context, ContextOps& ops) {
  verbs_context* extended = verbs_get_ctx(context);
  if (extended == nullptr) return;
  if (verbs_get_ctx_op(context, create_cq_ex) != nullptr) {
    ops.create_cq_ex = extended->create_cq_ex;
    extended->create_cq_ex = create_cq_ex_with_faults;
  }
  if (verbs_get_ctx_op(context, create_qp_ex) != nullptr) {
    ops.create_qp_ex = extended->create_qp_ex;
    extended->create_qp_ex = create_qp_ex_with_faults;
  }
  if (verbs_get_ctx_op(context, query_device_ex) != nullptr) {
    ops.query_device_ex = extended->query_device_ex;
    extended->query_device_ex = query_device_ex_with_caps;
  }
}

}  // namespace

void instrument_context(ibv_context* context, const char* how) {
  // Without a rule nothing is swapped: a program under an empty plan runs at full speed.
  if (!Plan::get().empty()) {
    std::lock_guard lock(registry_mutex);
    ContextOps* ops = slot_for(context);
    if (ops == nullptr) {
      log_event({{"event", "plan_error"}, {"error", "more than 256 verbs contexts: not faulted"}});
      return;
    }
    *ops = ContextOps{};
    std::strncpy(ops->device, device_name(context->device), sizeof ops->device - 1);
    ops->poll_cq = context->ops.poll_cq;
    ops->post_send = context->ops.post_send;
    ops->post_recv = context->ops.post_recv;
    ops->post_srq_recv = context->ops.post_srq_recv;
    // Publish the originals before the swap: a thread may poll as soon as it sees the swap.
    std::atomic_thread_fence(std::memory_order_release);
    ops->context = context;
    context->ops.poll_cq = poll_cq_with_faults;
    context->ops.post_send = post_send_with_faults;
    context->ops.post_recv = post_recv_with_faults;
    context->ops.post_srq_recv = post_srq_recv_with_faults;
    swap_extended(context, *ops);
  }
  log_event({{"event", "instrumented"},
             {"object", "context"},
             {"layer", "verbs"},
             {"call", how},
             {"device", device_name(context->device)}});
}

const ContextOps& original_ops(ibv_context* context) {
  const size_t count = context_count.load(std::memory_order_acquire);
  for (size_t i = 0; i < count; ++i)
    if (contexts[i].context == context) return contexts[i];
  static const ContextOps none{};
  return none;
}

void remember_qp(ibv_qp* qp) {
  std::lock_guard lock(qp_mutex);
  qps[{qp->context, qp->qp_num}] = qp;
}

void forget_qp(ibv_qp* qp) {
  std::lock_guard lock(qp_mutex);
  qps.erase({qp->context, qp->qp_num});
}

ibv_qp* qp_by_number(ibv_context* context, uint32_t qp_num) {
  std::lock_guard lock(qp_mutex);
  auto found = qps.find({context, qp_num});
  return found == qps.end() ? nullptr : found->second;
}

}  // namespace faultline::transports::interpose
