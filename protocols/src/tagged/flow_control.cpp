#include "faultline/protocols/tagged/flow_control.hpp"

#include <algorithm>
#include <limits>

namespace faultline::protocols::tagged {

CreditWindow::CreditWindow(size_t peer_slots, size_t own_slots)
    : credits_(peer_slots), own_slots_(own_slots) {}

void CreditWindow::consume() {
  if (credits_ > 0) --credits_;
}

uint16_t CreditWindow::take_returns() {
  const size_t told = std::min<size_t>(to_return_, std::numeric_limits<uint16_t>::max());
  to_return_ -= told;
  return static_cast<uint16_t>(told);
}

bool EagerQueue::push(QueuedEager& item) {
  if (full()) return false;
  items_.push_back(std::move(item));
  high_water_ = std::max(high_water_, items_.size());
  return true;
}

}  // namespace faultline::protocols::tagged
