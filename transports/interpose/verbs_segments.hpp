#pragma once

#include <infiniband/verbs.h>

#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "process_plan.hpp"

namespace faultline::transports::interpose {

/// The plan's segment_count fault for one request of `event` posting `sges` (counted, and
/// logged with `details` and the segments and bytes asked and posted): the SGEs to post
/// instead, or nullopt when none fired.
std::optional<std::vector<ibv_sge>> changed_segments(const Event& event,
                                                     std::span<const ibv_sge> sges,
                                                     nlohmann::json details);

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
  std::deque<std::vector<ibv_sge>> lists_;  // the changed requests' SGEs
};

extern template class SegmentChange<ibv_send_wr>;
extern template class SegmentChange<ibv_recv_wr>;

}  // namespace faultline::transports::interpose
