#include "verbs_segments.hpp"

#include <span>
#include <type_traits>
#include <utility>

#include "faultline/transports/fault/segment_split.hpp"
#include "process_plan.hpp"
#include "verbs_faults.hpp"

namespace faultline::transports::interpose {

namespace {

template <typename WorkRequest>
Event event_of(const WorkRequest& wr, const ibv_qp* qp) {
  if constexpr (std::is_same_v<WorkRequest, ibv_send_wr>) return send_event(wr, qp->qp_num);
  Event event;
  event.side = Side::kRecv;
  if (qp != nullptr) event.qp_num = qp->qp_num;
  return event;
}

std::vector<ibv_sge> split_sges(const ibv_sge* list, int count, uint32_t into) {
  return fault::split_pieces(
      std::span<const ibv_sge>(list, static_cast<size_t>(count)), into,
      [](const ibv_sge& sge) { return sge.length; },
      [](const ibv_sge& sge, uint32_t first) {
        return std::pair{ibv_sge{sge.addr, first, sge.lkey},
                         ibv_sge{sge.addr + first, sge.length - first, sge.lkey}};
      });
}

}  // namespace

template <typename WorkRequest>
SegmentChange<WorkRequest>::SegmentChange(WorkRequest* chain, const ibv_qp* qp, const char* call) {
  Plan& plan = Plan::get();
  if (!plan.has(FaultKind::kSegmentCount)) return;
  for (WorkRequest* wr = chain; wr != nullptr; wr = wr->next) {
    auto fired = plan.post_fault(event_of(*wr, qp), FaultKind::kSegmentCount);
    if (!fired) continue;
    original_.emplace_back(wr, wr->sg_list, wr->num_sge);
    const int asked = wr->num_sge;
    const uint64_t asked_bytes = sge_bytes(wr->sg_list, asked);
    if (fired->segment_mode == SegmentMode::kFewer) {
      wr->num_sge = asked > 0 ? asked - 1 : 0;
    } else {
      split_lists_.push_back(split_sges(wr->sg_list, asked, fired->split_into));
      wr->sg_list = split_lists_.back().data();
      wr->num_sge = static_cast<int>(split_lists_.back().size());
    }
    nlohmann::json details = {{"call", call},
                              {"layer", "verbs"},
                              {"wr_id", wr->wr_id},
                              {"segments", {asked, wr->num_sge}},
                              {"bytes", {asked_bytes, sge_bytes(wr->sg_list, wr->num_sge)}}};
    if (qp != nullptr) details["qp_num"] = qp->qp_num;
    log_fault(*fired, std::move(details));
  }
}

template <typename WorkRequest>
SegmentChange<WorkRequest>::~SegmentChange() {
  for (auto& [wr, list, count] : original_) {
    wr->sg_list = list;
    wr->num_sge = count;
  }
}

template class SegmentChange<ibv_send_wr>;
template class SegmentChange<ibv_recv_wr>;

}  // namespace faultline::transports::interpose
