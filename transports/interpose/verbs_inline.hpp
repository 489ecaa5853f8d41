#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "process_plan.hpp"

namespace faultline::transports::interpose {

/// The inline room to ask a QP for: under `inline: force`, at least kForcedInlineRoom bytes
/// (no more than a limits cap), so a program that asked for none has sends to force.
uint32_t inline_room_to_ask(uint32_t asked);
/// Keeps the inline room the device granted a QP (only while the plan has an inline fault);
/// a room `raised` by inline_room_to_ask is logged as a fault (a program that sizes its sends
/// from its QP's room, as ibv_rc_pingpong does, now posts them inline).
void remember_inline_room(const ibv_qp* qp, const char* call, uint32_t asked, uint32_t granted,
                          bool raised);
void forget_inline_room(const ibv_qp* qp);

/// Creates a QP through `create` (`call`) asking `cap` for inline_room_to_ask; when the device
/// refuses that room, again with the program's own request.
template <typename Create>
ibv_qp* create_with_inline_room(ibv_qp_cap& cap, const char* call, Create&& create) {
  const uint32_t asked = cap.max_inline_data;
  cap.max_inline_data = inline_room_to_ask(asked);
  bool raised = cap.max_inline_data != asked;
  ibv_qp* qp = create();
  if (qp == nullptr && raised) {
    cap.max_inline_data = asked;
    raised = false;
    qp = create();
  }
  if (qp != nullptr) remember_inline_room(qp, call, asked, cap.max_inline_data, raised);
  return qp;
}

/// The program's memory registrations (kept only under `inline: off`: a send that loses its
/// inline flag reads its bytes through its lkey).
void remember_registration(const ibv_mr* mr);
void forget_registration(const ibv_mr* mr);

/// The inline fault that changes one send of `qp` (counted), if any: `is_inline` whether the
/// program posts it inline, `length` its bytes. `details` gets what the log line says of it.
std::optional<FiredFault> inline_fault_for(const ibv_qp* qp, const Event& event, bool is_inline,
                                           uint64_t length, nlohmann::json& details);
/// The lkey of a registration of the process that holds [address, address + length), if any.
std::optional<uint32_t> registered_lkey(uint64_t address, uint64_t length);
/// Logs an `off` fault on a send from unregistered memory (its post fails with EINVAL).
void log_unregistered(const FiredFault& fired, nlohmann::json details);

/// A chain of the program's sends with the plan's inline mode applied, each change logged as a
/// fault: `off` clears IBV_SEND_INLINE, `force` sets it within the QP's inline room,
/// `above_limit` sets it above. The program's flags come back when this ends (after the post:
/// a provider reads them only while posting).
class InlineChange {
 public:
  InlineChange(ibv_qp* qp, ibv_send_wr* chain);
  ~InlineChange();
  InlineChange(const InlineChange&) = delete;
  InlineChange& operator=(const InlineChange&) = delete;

  /// Under `off`: the first send whose bytes lie in no registration of the process. A NIC that
  /// cannot post it inline cannot post it at all: its post fails (EINVAL).
  const ibv_send_wr* unregistered() const { return unregistered_; }

 private:
  std::vector<std::pair<ibv_send_wr*, unsigned>> original_flags_;
  const ibv_send_wr* unregistered_ = nullptr;
};

}  // namespace faultline::transports::interpose
