#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "faultline/transports/interpose/fault_rules.hpp"

namespace faultline::transports::interpose {

/// One completion or post the rules are asked about.
struct Event {
  Side side = Side::kAny;  ///< kSend or kRecv where the transport says which; kAny where not
  std::optional<transports::Opcode> opcode;
  std::optional<uint32_t> qp_num;
  std::string_view layer;  ///< ofi: the provider's name; verbs: empty
  bool outermost = true;   ///< ofi: the program's own call, not a utility provider's inner one
};

/// The process's fault plan (FAULTLINE_FAULTS), loaded once; a plan that does not parse is
/// logged as `plan_error` and the program runs unfaulted. Rules are counted under one lock, so
/// `nth` means the same across threads.
class Plan {
 public:
  static Plan& get();

  /// True when the plan has no rule for this process.
  bool empty() const { return rules_.empty(); }
  // What the plan holds, found once at load (the data path asks on every post and poll).
  /// True when some rule is of `kind`.
  bool has(FaultKind kind) const { return (kinds_ & (1U << static_cast<unsigned>(kind))) != 0; }
  /// True when some completion rule (status, data, drop, duplicate) exists.
  bool has_completion_rules() const { return completion_rules_; }
  /// True when some rule changes the data a receive delivered.
  bool has_data_rules() const { return data_rules_; }
  /// True when some rule restores a receive buffer (its bytes are kept at post time).
  bool has_suppress_rules() const { return suppress_rules_; }
  /// The completion rule that fires for `event` (counted), if any; `allowed` filters kinds.
  std::optional<FaultRule> completion_fault(const Event& event,
                                            bool (*allowed)(FaultKind) = nullptr);
  /// The fail_post rule that fires for one posted work request, if any.
  std::optional<FaultRule> post_fault(const Event& event);
  /// The smallest cap of every limits rule for this process.
  const LimitCaps& caps() const { return caps_; }

 private:
  Plan();
  bool applies_here(const FaultRule& rule) const;

  std::mutex mutex_;
  std::vector<FaultRule> rules_;
  std::mt19937_64 random_;
  std::optional<int> rank_;
  LimitCaps caps_;
  unsigned kinds_ = 0;  // bit per FaultKind present
  bool completion_rules_ = false;
  bool data_rules_ = false;
  bool suppress_rules_ = false;
};

/// Logs a `fault` event for `rule` with what it hit.
void log_fault(const FaultRule& rule, nlohmann::json details);

}  // namespace faultline::transports::interpose
