#include "posted_operations.hpp"

#include <algorithm>

namespace faultline::transports::interpose {

PostedOperations& PostedOperations::get() {
  // Never destroyed: programs poll from threads that outlive static destruction.
  static auto* operations = new PostedOperations();
  return *operations;
}

bool PostedOperations::wanted() { return Plan::get().filters_completions_by_post(); }

void PostedOperations::record(uint64_t queue, uintptr_t context, Operation operation) {
  if (context == 0) return;  // no completion carries it
  std::lock_guard lock(mutex_);
  posted_[{queue, context}].push_back(operation);
}

std::optional<PostedOperations::Operation> PostedOperations::take(uint64_t queue,
                                                                  uintptr_t context) {
  std::lock_guard lock(mutex_);
  auto found = posted_.find({queue, context});
  if (found == posted_.end()) return std::nullopt;
  const Operation operation = found->second.front();
  found->second.pop_front();
  if (found->second.empty()) posted_.erase(found);
  return operation;
}

}  // namespace faultline::transports::interpose
