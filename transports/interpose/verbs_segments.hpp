#pragma once

#include <infiniband/verbs.h>

#include <deque>
#include <tuple>
#include <vector>

namespace faultline::transports::interpose {

/// A chain of the program's work requests with the plan's segment_count faults applied, each
/// logged: `fewer` posts one SGE fewer than the request asked (the last one left out: a short
/// message, or a receive with less room), `split` the same bytes across `into` SGEs (above the
/// QP's max_send_sge or max_recv_sge the provider refuses the post, as that NIC would). The
/// program's SGE lists come back when this ends (after the post: a provider reads them only
/// while posting).
template <typename WorkRequest>
class SegmentChange {
 public:
  SegmentChange(WorkRequest* chain, const ibv_qp* qp, const char* call);
  ~SegmentChange();
  SegmentChange(const SegmentChange&) = delete;
  SegmentChange& operator=(const SegmentChange&) = delete;

 private:
  std::vector<std::tuple<WorkRequest*, ibv_sge*, int>> original_;
  std::deque<std::vector<ibv_sge>> split_lists_;
};

extern template class SegmentChange<ibv_send_wr>;
extern template class SegmentChange<ibv_recv_wr>;

}  // namespace faultline::transports::interpose
