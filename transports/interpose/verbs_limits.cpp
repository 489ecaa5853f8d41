#include "verbs_limits.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "event_log.hpp"
#include "fault_plan.hpp"
#include "verbs_real.hpp"

namespace faultline::transports::interpose {

namespace {

bool above(uint64_t asked, const std::optional<uint32_t>& cap) { return cap && asked > *cap; }

int refuse(const char* call, const char* field, uint64_t asked, uint32_t cap,
           ibv_context* context) {
  log_event({{"event", "fault"},
             {"kind", "limits"},
             {"call", call},
             {"device", device_name(context->device)},
             {"field", field},
             {"asked", asked},
             {"cap", cap},
             {"errno", EINVAL},
             {"error", std::strerror(EINVAL)}});
  errno = EINVAL;
  return EINVAL;
}

template <typename Count>
void clamp(Count& value, const std::optional<uint32_t>& cap) {
  if (cap && static_cast<uint64_t>(value) > *cap) value = static_cast<Count>(*cap);
}

}  // namespace

int refuse_qp_caps(const ibv_qp_cap& cap, const char* call, ibv_context* context) {
  const LimitCaps& caps = Plan::get().caps();
  // Each field the program asks for, against the cap that bounds it (max_qp_wr bounds both
  // queues, as the device attribute does).
  const struct {
    const char* field;
    uint32_t asked;
    const std::optional<uint32_t>& cap;
  } checks[] = {
      {"max_send_wr", cap.max_send_wr, caps.max_qp_wr},
      {"max_recv_wr", cap.max_recv_wr, caps.max_qp_wr},
      {"max_recv_wr", cap.max_recv_wr, caps.max_recv_wr},
      {"max_send_sge", cap.max_send_sge, caps.max_send_sge},
      {"max_recv_sge", cap.max_recv_sge, caps.max_recv_sge},
      {"max_inline_data", cap.max_inline_data, caps.max_inline_data},
  };
  for (const auto& check : checks) {
    if (above(check.asked, check.cap))
      return refuse(call, check.field, check.asked, *check.cap, context);
  }
  return 0;
}

void clamp_qp_caps(ibv_qp_cap& cap) {
  const LimitCaps& caps = Plan::get().caps();
  clamp(cap.max_send_wr, caps.max_qp_wr);
  clamp(cap.max_recv_wr, caps.max_qp_wr);
  clamp(cap.max_recv_wr, caps.max_recv_wr);
  clamp(cap.max_send_sge, caps.max_send_sge);
  clamp(cap.max_recv_sge, caps.max_recv_sge);
  clamp(cap.max_inline_data, caps.max_inline_data);
}

int refuse_cq_size(int cqe, const char* call, ibv_context* context) {
  const auto& cap = Plan::get().caps().max_cqe;
  if (cqe > 0 && above(static_cast<uint64_t>(cqe), cap))
    return refuse(call, "cqe", static_cast<uint64_t>(cqe), *cap, context);
  return 0;
}

void clamp_device_attr(ibv_device_attr& attr, const char* call) {
  const LimitCaps& caps = Plan::get().caps();
  const ibv_device_attr device = attr;
  clamp(attr.max_qp_wr, caps.max_qp_wr);
  clamp(attr.max_cqe, caps.max_cqe);
  // One max_sge in the device attributes: the smaller of the two sides' caps.
  clamp(attr.max_sge, caps.max_send_sge);
  clamp(attr.max_sge, caps.max_recv_sge);
  // The program was shown a smaller device: a fault applied (what it did then is its verdict).
  nlohmann::json lowered = nlohmann::json::object();
  if (attr.max_qp_wr != device.max_qp_wr) lowered["max_qp_wr"] = {device.max_qp_wr, attr.max_qp_wr};
  if (attr.max_cqe != device.max_cqe) lowered["max_cqe"] = {device.max_cqe, attr.max_cqe};
  if (attr.max_sge != device.max_sge) lowered["max_sge"] = {device.max_sge, attr.max_sge};
  if (lowered.empty()) return;
  log_event({{"event", "fault"}, {"kind", "limits"}, {"call", call}, {"lowered", lowered}});
}

}  // namespace faultline::transports::interpose
