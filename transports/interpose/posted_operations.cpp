#include "posted_operations.hpp"

#include <rdma/fabric.h>

#include <algorithm>

namespace faultline::transports::interpose {

PostedOperations& PostedOperations::get() {
  // Never destroyed: programs poll from threads that outlive static destruction.
  static auto* operations = new PostedOperations();
  return *operations;
}

bool PostedOperations::wanted() {
  return Plan::get().filters_completions_by_post() || Plan::get().maps_sites();
}

void PostedOperations::record(uint64_t queue, uintptr_t context, Operation operation) {
  std::lock_guard lock(mutex_);
  const Side side = operation.side;
  posted_[{queue, context, side}].push_back(std::move(operation));
}

std::optional<PostedOperations::Operation> PostedOperations::take(uint64_t queue, uintptr_t context,
                                                                  Side side) {
  std::lock_guard lock(mutex_);
  auto sends = posted_.find({queue, context, Side::kSend});
  auto receives = posted_.find({queue, context, Side::kRecv});
  auto found = side == Side::kSend ? sends : side == Side::kRecv ? receives : posted_.end();
  if (side == Side::kAny) {
    if (sends != posted_.end() && receives == posted_.end()) found = sends;
    if (receives != posted_.end() && sends == posted_.end()) found = receives;
  }
  if (found == posted_.end()) return std::nullopt;
  const Operation operation = found->second.front();
  found->second.pop_front();
  if (found->second.empty()) posted_.erase(found);
  return operation;
}

void PostedOperations::bound(const void* cq, uint64_t flags) {
  std::lock_guard lock(mutex_);
  bindings_[cq] |= flags;
}

Side PostedOperations::side_of_cq(const void* cq) {
  std::lock_guard lock(mutex_);
  auto found = bindings_.find(cq);
  if (found == bindings_.end()) return Side::kAny;
  const bool transmits = (found->second & FI_TRANSMIT) != 0;
  const bool receives = (found->second & FI_RECV) != 0;
  if (transmits == receives) return Side::kAny;
  return transmits ? Side::kSend : Side::kRecv;
}

}  // namespace faultline::transports::interpose
