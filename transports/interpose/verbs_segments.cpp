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

std::vector<ibv_sge> split_sges(std::span<const ibv_sge> sges, uint32_t into) {
  return fault::split_pieces(
      sges, into, [](const ibv_sge& sge) { return sge.length; },
      [](const ibv_sge& sge, uint32_t first) {
        return std::pair{ibv_sge{sge.addr, first, sge.lkey},
                         ibv_sge{sge.addr + first, sge.length - first, sge.lkey}};
      });
}

uint64_t bytes_of(std::span<const ibv_sge> sges) {
  return sge_bytes(sges.data(), static_cast<int>(sges.size()));
}

}  // namespace

std::optional<std::vector<ibv_sge>> changed_segments(const Event& event,
                                                     std::span<const ibv_sge> sges,
                                                     nlohmann::json details) {
  auto fired = Plan::get().post_fault(event, FaultKind::kSegmentCount);
  if (!fired) return std::nullopt;
  std::vector<ibv_sge> changed =
      fired->segment_mode == SegmentMode::kFewer
          ? std::vector<ibv_sge>(sges.begin(), sges.empty() ? sges.end() : sges.end() - 1)
          : split_sges(sges, fired->split_into);
  details["layer"] = "verbs";
  details["segments"] = {sges.size(), changed.size()};
  details["bytes"] = {bytes_of(sges), bytes_of(changed)};
  if (event.qp_num) details["qp_num"] = *event.qp_num;
  log_fault(*fired, std::move(details));
  return changed;
}

template <typename WorkRequest>
SegmentChange<WorkRequest>::SegmentChange(WorkRequest* chain, const ibv_qp* qp, const char* call) {
  if (!Plan::get().has(FaultKind::kSegmentCount)) return;
  for (WorkRequest* wr = chain; wr != nullptr; wr = wr->next) {
    auto changed = changed_segments(
        event_of(*wr, qp), std::span<const ibv_sge>(wr->sg_list, static_cast<size_t>(wr->num_sge)),
        {{"call", call}, {"wr_id", wr->wr_id}});
    if (!changed) continue;
    original_.emplace_back(wr, wr->sg_list, wr->num_sge);
    lists_.push_back(std::move(*changed));
    wr->sg_list = lists_.back().data();
    wr->num_sge = static_cast<int>(lists_.back().size());
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
