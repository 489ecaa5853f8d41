#include "faultline/transports/fault/fault_plan.hpp"

namespace faultline::transports::fault {

const std::vector<std::string>& overridable_limit_names() {
  static const std::vector<std::string> names = {"max_qp_wr",       "max_recv_wr",  "max_cqe",
                                                 "max_send_sge",    "max_recv_sge", "max_sge_rd",
                                                 "max_inline_data", "max_msg_size", "max_mr_size",
                                                 "active_mtu",      "max_mtu"};
  return names;
}

DeviceLimits apply_limit_overrides(DeviceLimits limits,
                                   const std::map<std::string, uint64_t>& overrides) {
  for (const auto& [name, value] : overrides) {
    const auto narrow = static_cast<uint32_t>(value);
    if (name == "max_qp_wr") limits.max_qp_wr = narrow;
    if (name == "max_recv_wr") limits.max_recv_wr = narrow;
    if (name == "max_cqe") limits.max_cqe = narrow;
    if (name == "max_send_sge") limits.max_send_sge = narrow;
    if (name == "max_recv_sge") limits.max_recv_sge = narrow;
    if (name == "max_sge_rd") limits.max_sge_rd = narrow;
    if (name == "max_inline_data") limits.max_inline_data = narrow;
    if (name == "max_msg_size") limits.max_msg_size = value;
    if (name == "max_mr_size") limits.max_mr_size = value;
    if (name == "active_mtu") limits.active_mtu = narrow;
    if (name == "max_mtu") limits.max_mtu = narrow;
  }
  return limits;
}

std::optional<uint64_t> limit_value(const DeviceLimits& limits, const std::string& name) {
  if (name == "max_qp_wr") return limits.max_qp_wr;
  if (name == "max_recv_wr") return limits.max_recv_wr;
  if (name == "max_cqe") return limits.max_cqe;
  if (name == "max_send_sge") return limits.max_send_sge;
  if (name == "max_recv_sge") return limits.max_recv_sge;
  if (name == "max_sge_rd") return limits.max_sge_rd;
  if (name == "max_inline_data") return limits.max_inline_data;
  if (name == "max_msg_size") return limits.max_msg_size;
  if (name == "max_mr_size") return limits.max_mr_size;
  if (name == "active_mtu") return limits.active_mtu;
  if (name == "max_mtu") return limits.max_mtu;
  return std::nullopt;
}

}  // namespace faultline::transports::fault
