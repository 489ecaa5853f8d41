#include "faultline/transports/fault/fault_plan.hpp"

#include <optional>
#include <type_traits>

namespace faultline::transports::fault {

const std::vector<std::string>& overridable_limit_names() {
  static const std::vector<std::string> names = {"max_qp_wr",       "max_recv_wr",  "max_cqe",
                                                 "max_send_sge",    "max_recv_sge", "max_sge_rd",
                                                 "max_inline_data", "max_msg_size", "max_mr_size",
                                                 "active_mtu",      "max_mtu"};
  return names;
}

const std::vector<std::string>& applied_fault_kinds() {
  static const std::vector<std::string> kinds = {
      "rewrite_status",       "drop_completion",   "delay_completion",
      "duplicate_completion", "replay_completion", "fail_post",
      "inline_off",           "inline_forced",     "limits"};
  return kinds;
}

namespace {

// Calls `visit` with the field of `limits` named `name` (a count, an optional count, or a
// 64-bit size); false when no field has that name. The one map from names to fields.
template <typename Limits, typename Visit>
bool visit_limit(Limits& limits, const std::string& name, Visit&& visit) {
  if (name == "max_qp_wr") return visit(limits.max_qp_wr), true;
  if (name == "max_recv_wr") return visit(limits.max_recv_wr), true;
  if (name == "max_cqe") return visit(limits.max_cqe), true;
  if (name == "max_send_sge") return visit(limits.max_send_sge), true;
  if (name == "max_recv_sge") return visit(limits.max_recv_sge), true;
  if (name == "max_sge_rd") return visit(limits.max_sge_rd), true;
  if (name == "max_inline_data") return visit(limits.max_inline_data), true;
  if (name == "max_msg_size") return visit(limits.max_msg_size), true;
  if (name == "max_mr_size") return visit(limits.max_mr_size), true;
  if (name == "active_mtu") return visit(limits.active_mtu), true;
  if (name == "max_mtu") return visit(limits.max_mtu), true;
  return false;
}

template <typename T>
struct OptionalValue {
  using type = T;
};
template <typename T>
struct OptionalValue<std::optional<T>> {
  using type = T;
};

}  // namespace

DeviceLimits apply_limit_overrides(DeviceLimits limits,
                                   const std::map<std::string, uint64_t>& overrides) {
  for (const auto& [name, value] : overrides) {
    visit_limit(limits, name, [value = value](auto& field) {
      using Field = std::remove_reference_t<decltype(field)>;
      field = static_cast<typename OptionalValue<Field>::type>(value);
    });
  }
  return limits;
}

std::optional<uint64_t> limit_value(const DeviceLimits& limits, const std::string& name) {
  std::optional<uint64_t> found;
  visit_limit(limits, name, [&found](const auto& field) {
    if constexpr (requires { field.has_value(); }) {
      if (field) found = *field;
    } else {
      found = field;
    }
  });
  return found;
}

}  // namespace faultline::transports::fault
