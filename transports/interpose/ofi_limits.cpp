#include "ofi_limits.hpp"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "event_log.hpp"
#include "process_plan.hpp"

namespace faultline::transports::interpose {

namespace {

// One attribute of an fi_info a cap applies to.
struct CappedAttribute {
  const char* attribute;  // "tx_attr->size"
  const char* limit;      // the fault language's name of its cap
  size_t* (*field)(fi_info&);
};

constexpr CappedAttribute kAttributes[] = {
    {"tx_attr->size", "max_qp_wr",
     [](fi_info& i) { return i.tx_attr != nullptr ? &i.tx_attr->size : nullptr; }},
    {"rx_attr->size", "max_recv_wr",
     [](fi_info& i) { return i.rx_attr != nullptr ? &i.rx_attr->size : nullptr; }},
    {"tx_attr->iov_limit", "max_send_sge",
     [](fi_info& i) { return i.tx_attr != nullptr ? &i.tx_attr->iov_limit : nullptr; }},
    {"rx_attr->iov_limit", "max_recv_sge",
     [](fi_info& i) { return i.rx_attr != nullptr ? &i.rx_attr->iov_limit : nullptr; }},
    {"tx_attr->rma_iov_limit", "max_sge_rd",
     [](fi_info& i) { return i.tx_attr != nullptr ? &i.tx_attr->rma_iov_limit : nullptr; }},
    {"tx_attr->inject_size", "max_inline_data",
     [](fi_info& i) { return i.tx_attr != nullptr ? &i.tx_attr->inject_size : nullptr; }},
    {"ep_attr->max_msg_size", "max_msg_size",
     [](fi_info& i) { return i.ep_attr != nullptr ? &i.ep_attr->max_msg_size : nullptr; }},
};

std::optional<uint64_t> cap_of(const CappedAttribute& attribute) {
  return Plan::get().caps().cap(attribute.limit);
}

// The first attribute of `info` above its cap, with its value; nullopt when all fit.
std::optional<std::pair<const CappedAttribute*, uint64_t>> first_above(const fi_info& info) {
  auto& changeable = const_cast<fi_info&>(info);  // read only: the accessors serve both
  for (const CappedAttribute& attribute : kAttributes) {
    const size_t* value = attribute.field(changeable);
    const auto cap = cap_of(attribute);
    if (value != nullptr && cap && *value > *cap) return std::pair{&attribute, uint64_t{*value}};
  }
  return std::nullopt;
}

int refuse(const char* call, const fi_info& info, int error) {
  const auto above = first_above(info);
  if (!above) return 0;
  const auto& [attribute, asked] = *above;
  log_event({{"event", "fault"},
             {"kind", "limits"},
             {"call", call},
             {"layer", "ofi"},
             {"field", attribute->attribute},
             {"limit", attribute->limit},
             {"asked", asked},
             {"cap", cap_of(*attribute).value_or(0)},
             {"errno", error},
             {"error", std::strerror(error)}});
  return -error;
}

}  // namespace

int refuse_hints(const fi_info* hints) {
  if (hints == nullptr || !Plan::get().has(FaultKind::kLimits)) return 0;
  return refuse("fi_getinfo", *hints, FI_ENODATA);
}

int refuse_endpoint(const fi_info* info) {
  if (info == nullptr || !Plan::get().has(FaultKind::kLimits)) return 0;
  return refuse("fi_endpoint", *info, FI_EINVAL);
}

void cap_infos(fi_info* infos) {
  if (!Plan::get().has(FaultKind::kLimits)) return;
  note_caps_not_applied();
  nlohmann::json lowered = nlohmann::json::object();
  for (fi_info* info = infos; info != nullptr; info = info->next) {
    for (const CappedAttribute& attribute : kAttributes) {
      size_t* value = attribute.field(*info);
      const auto cap = cap_of(attribute);
      if (value == nullptr || !cap || *value <= *cap) continue;
      const uint64_t before = lowered.contains(attribute.attribute)
                                  ? lowered[attribute.attribute][0].get<uint64_t>()
                                  : 0;
      lowered[attribute.attribute] = {std::max<uint64_t>(before, *value), *cap};
      *value = static_cast<size_t>(*cap);
    }
  }
  if (lowered.empty()) return;
  log_event({{"event", "fault"},
             {"kind", "limits"},
             {"call", "fi_getinfo"},
             {"layer", "ofi"},
             {"lowered", lowered}});
}

void note_caps_not_applied() {
  static std::atomic<bool> noted{false};
  if (noted.exchange(true)) return;
  nlohmann::json names = nlohmann::json::array();
  for (const fault::LimitInfo& limit : fault::limit_infos()) {
    if (!Plan::get().caps().cap(limit.name)) continue;
    const bool mapped =
        std::any_of(std::begin(kAttributes), std::end(kAttributes),
                    [&](const CappedAttribute& a) { return limit.name == a.limit; });
    if (!mapped) names.push_back(limit.name);
  }
  if (names.empty()) return;
  log_event({{"event", "limits_not_applied"},
             {"layer", "ofi"},
             {"limits", names},
             {"hint",
              "libfabric has no fi_info attribute for these: a libfabric program is not "
              "held to them (a verbs program is)"}});
}

}  // namespace faultline::transports::interpose
