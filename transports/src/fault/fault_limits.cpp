// The limits of limit_table.hpp as the fault language sees them: their names, bounds and
// enforcers, and caps applied to a device's limits.
#include <algorithm>
#include <array>
#include <limits>

#include "faultline/transports/fault/fault_spec.hpp"

namespace faultline::transports::fault {

namespace {

// X-macro arguments are a name and a type: they cannot take parentheses.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define FAULTLINE_DEVICE_LIMIT_INFO(name, type, interposers)        \
  LimitInfo{#name, std::numeric_limits<limit_value_t<type>>::max(), \
            kDecorator | ((interposers) != 0U ? unsigned{kInterposer} : 0U), interposers},
#define FAULTLINE_CREATE_LIMIT_INFO(name, type) \
  LimitInfo{#name, std::numeric_limits<type>::max(), kInterposer, kByVerbs},
constexpr std::array kLimits{FAULTLINE_DEVICE_LIMITS(FAULTLINE_DEVICE_LIMIT_INFO)
                                 FAULTLINE_CREATE_LIMITS(FAULTLINE_CREATE_LIMIT_INFO)};
// NOLINTEND(bugprone-macro-parentheses)
#undef FAULTLINE_DEVICE_LIMIT_INFO
#undef FAULTLINE_CREATE_LIMIT_INFO

template <typename T>
void take_smaller_cap(std::optional<T>& cap, const std::optional<T>& other) {
  if (other) cap = cap ? std::min(*cap, *other) : *other;
}

template <typename T>
std::optional<uint64_t> value_of(const T& field) {
  return static_cast<uint64_t>(field);
}

template <typename T>
std::optional<uint64_t> value_of(const std::optional<T>& field) {
  return field ? std::optional<uint64_t>(*field) : std::nullopt;
}

}  // namespace

std::span<const LimitInfo> limit_infos() { return kLimits; }

bool Refused::refuses(std::string_view name) const {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void Refused::add(const Refused& other) {
  for (const std::string& name : other.names)
    if (!refuses(name)) names.push_back(name);
  if (!other.names.empty()) error_number = other.error_number;
}

std::vector<std::string> limit_names(unsigned appliers) {
  std::vector<std::string> names;
  for (const LimitInfo& limit : kLimits) {
    if ((limit.appliers & appliers) != 0) names.emplace_back(limit.name);
  }
  return names;
}

void LimitCaps::take_smaller(const LimitCaps& other) {
#define FAULTLINE_TAKE_DEVICE_CAP(name, type, interposer) take_smaller_cap(name, other.name);
#define FAULTLINE_TAKE_CREATE_CAP(name, type) take_smaller_cap(name, other.name);
  FAULTLINE_DEVICE_LIMITS(FAULTLINE_TAKE_DEVICE_CAP)
  FAULTLINE_CREATE_LIMITS(FAULTLINE_TAKE_CREATE_CAP)
#undef FAULTLINE_TAKE_DEVICE_CAP
#undef FAULTLINE_TAKE_CREATE_CAP
  if (other.vendor_id) vendor_id = other.vendor_id;
  if (other.vendor_part_id) vendor_part_id = other.vendor_part_id;
  refusal_errno = other.refusal_errno;
  clamp_inline = clamp_inline || other.clamp_inline;
  qp_types.add(other.qp_types);
  operations.add(other.operations);
  if (!other.source.empty()) source = other.source;
}

DeviceLimits LimitCaps::applied_to(DeviceLimits limits) const {
#define FAULTLINE_APPLY_CAP(name, type, interposer) \
  if (name) limits.name = *name;  // NOLINT(bugprone-macro-parentheses): a field name
  FAULTLINE_DEVICE_LIMITS(FAULTLINE_APPLY_CAP)
#undef FAULTLINE_APPLY_CAP
  return limits;
}

std::optional<uint64_t> LimitCaps::cap(std::string_view name) const {
#define FAULTLINE_DEVICE_CAP(field, type, interposer) \
  if (name == #field) return value_of(field);
#define FAULTLINE_CREATE_CAP(field, type) \
  if (name == #field) return value_of(field);
  FAULTLINE_DEVICE_LIMITS(FAULTLINE_DEVICE_CAP)
  FAULTLINE_CREATE_LIMITS(FAULTLINE_CREATE_CAP)
  FAULTLINE_CREATE_CAP(vendor_id, uint32_t)
  FAULTLINE_CREATE_CAP(vendor_part_id, uint32_t)
#undef FAULTLINE_DEVICE_CAP
#undef FAULTLINE_CREATE_CAP
  return std::nullopt;
}

std::optional<uint64_t> limit_value(const DeviceLimits& limits, std::string_view name) {
#define FAULTLINE_LIMIT_VALUE(field, type, interposer) \
  if (name == #field) return value_of(limits.field);
  FAULTLINE_DEVICE_LIMITS(FAULTLINE_LIMIT_VALUE)
#undef FAULTLINE_LIMIT_VALUE
  return std::nullopt;
}

}  // namespace faultline::transports::fault
