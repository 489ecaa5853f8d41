#pragma once

#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "faultline/transports/fault/fault_spec.hpp"

namespace faultline::transports::interpose {

using fault::DataAction;
using fault::FaultKind;
using fault::FaultSpec;
using fault::LimitCaps;
using fault::Refused;
using fault::SegmentMode;
using fault::Side;

/// One completion or post the plan is asked about.
struct Event {
  Side side = Side::kAny;  ///< kSend or kRecv where the transport says which; kAny where not
  std::optional<transports::Opcode> opcode;
  std::optional<uint32_t> qp_num;
  std::string_view layer;  ///< ofi: the provider's name; verbs: empty
  bool outermost = true;   ///< ofi: the program's own call, not a utility provider's inner one
  std::string_view site;   ///< a completion's: its post's call site, where the post was seen
};

/// A fault that fired: its spec, and the match it fired on.
struct FiredFault : FaultSpec {
  uint64_t match = 0;
};

/// The process's fault plan (FAULTLINE_FAULTS: the fault language, as the interposers apply
/// it), loaded once; a plan that does not parse is logged as `plan_error` and the program runs
/// unfaulted. Faults are counted under one lock, so `nth` means the same across threads.
class Plan {
 public:
  static Plan& get();

  /// True when the plan has no fault for this process.
  bool empty() const { return faults_.empty(); }
  // What the plan holds, found once at load (the data path asks on every post and poll).
  /// True when some fault is of `kind`.
  bool has(FaultKind kind) const { return (kinds_ & (1U << static_cast<unsigned>(kind))) != 0; }
  /// True when some inline fault has `mode`.
  bool has_inline_mode(fault::InlineMode mode) const {
    return (inline_modes_ & (1U << static_cast<unsigned>(mode))) != 0;
  }
  /// True when some fault acts on completions (status, data, drop, duplicate).
  bool has_completion_rules() const { return completion_rules_; }
  /// True when some completion fault filters by side, opcode or site (libfabric: a CQ without
  /// entry flags matches them by what was posted; a completion's site is its post's).
  bool filters_completions_by_post() const { return completion_filters_; }
  /// True when some fault changes the data a receive delivered.
  bool has_data_rules() const { return data_rules_; }
  /// True when some fault restores a receive buffer (its bytes are kept at post time).
  bool has_suppress_rules() const { return suppress_rules_; }
  /// True when an `observe` fault maps the program's call sites (note_site at every post and
  /// completion).
  bool maps_sites() const { return maps_sites_; }
  /// The completion fault that fires for `event` (counted), if any; `allowed` filters faults.
  std::optional<FiredFault> completion_fault(const Event& event,
                                             bool (*allowed)(const FaultSpec&) = nullptr);
  /// The fault of `kind` (fail_post, segment_count) that fires for one posted work request, if
  /// any.
  std::optional<FiredFault> post_fault(const Event& event, FaultKind kind = FaultKind::kFailPost);
  /// The rewrite_field fault that fires for one posted send or write of `length` bytes (counted
  /// where its length and equals filters hold: `read` gives the field's value, nullopt past the
  /// message's end), if any.
  std::optional<FiredFault> field_fault(
      const Event& event, uint64_t length,
      const std::function<std::optional<uint64_t>(const fault::FieldRewrite&)>& read);
  /// True when an `observe` fault logs a field of the posts it matches.
  bool observes_fields() const { return observes_fields_; }
  /// Each `observe` field one posted send or write of `length` bytes matches (its filters and
  /// length), read by `read` and logged as a `field` event with `details` (the post's call, QP).
  void log_observed_fields(
      const Event& event, uint64_t length,
      const std::function<std::optional<uint64_t>(const fault::FieldRewrite&)>& read,
      const nlohmann::json& details);
  /// The inline fault for one posted send whose mode `changes` it (every such send, counted),
  /// if any.
  std::optional<FiredFault> inline_fault(const Event& event,
                                         const std::function<bool(fault::InlineMode)>& changes);
  /// The smallest cap of every limits fault for this process.
  const LimitCaps& caps() const { return caps_; }

 private:
  struct Counted {
    FaultSpec spec;
    uint64_t matched = 0;
  };

  Plan();
  bool applies_here(const FaultSpec& fault) const;

  std::mutex mutex_;
  std::vector<Counted> faults_;
  std::mt19937_64 random_;
  std::optional<int> rank_;
  LimitCaps caps_;
  unsigned kinds_ = 0;         // bit per FaultKind present
  unsigned inline_modes_ = 0;  // bit per InlineMode of an inline fault
  bool completion_rules_ = false;
  bool completion_filters_ = false;
  bool data_rules_ = false;
  bool suppress_rules_ = false;
  bool maps_sites_ = false;
  bool observes_fields_ = false;
};

/// Logs a `fault` event for `fired` with what it hit.
void log_fault(const FiredFault& fired, nlohmann::json details);

/// A fired rewrite_field's log details: the field, and the values it held and holds.
nlohmann::json field_details(const fault::FieldRewrite& field,
                             std::optional<std::pair<uint64_t, uint64_t>> values);

/// This process's rank as its launcher gave it (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,
/// SLURM_PROCID), or nullopt.
std::optional<int> launcher_rank();

}  // namespace faultline::transports::interpose
