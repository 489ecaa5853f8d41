#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/harness/devices/device_profiles.hpp"
#include "faultline/harness/sut/sut_exec.hpp"

namespace faultline::harness::port_check {

/// One request of the program a target would refuse.
struct Refusal {
  std::string call;   ///< ibv_create_qp, ibv_create_cq, ibv_post_send (inline)
  std::string field;  ///< as the program asked: max_send_wr, cqe, inline_bytes, ...
  std::string limit;  ///< the target's limit it is held against: max_qp_wr, max_cqe, ...
  uint64_t asked = 0;
  uint64_t allowed = 0;
  std::string source;    ///< where the target's value comes from
  nlohmann::json stack;  ///< where in the program (the interposer's frames)
  std::string how;       ///< "ibv_create_qp fails with EINVAL", "the post fails", ...
  std::string what;      ///< the finding in a line: "max_send_wr 8 > max_qp_wr 4", "qp_type RC"
  size_t count = 1;      ///< how many requests made this same finding (each QP's modify)
  nlohmann::json sites = nlohmann::json::array();  ///< their other call sites, each once
};

/// How the program would fare on one target.
struct TargetOutcome {
  std::string target;
  /// runs, would-fail, unknown (a limit it asked about is not known), or not-reached (the
  /// program asked the device for nothing: nothing was checked)
  std::string verdict;
  /// In the order the program made them: the first is the call that would fail there first.
  std::vector<Refusal> refusals;
  std::vector<std::string> unknown;  ///< limits asked about that the profile does not hold
  /// not-reached: why no request was seen (no device here, the interposer never reached,
  /// nothing asked)
  std::string not_reached;
};

/// Every request against every target: no request is refused on this machine (observe), or the
/// program sees `enforced`'s limits and has its requests refused with that driver's errno.
struct PortCheckOptions {
  std::vector<std::string> command;
  std::vector<DeviceProfile> targets;
  std::optional<DeviceProfile> enforced;
  std::chrono::milliseconds deadline{120000};
  std::string interpose_dir;
  std::string work_dir;
};

struct PortCheckResult {
  sut::ExecResult run;                   ///< how the program ran here
  std::vector<nlohmann::json> requests;  ///< the interposer's `request` events
  std::vector<TargetOutcome> targets;
};

/// Holds each request against one target's limits.
TargetOutcome judge_target(const std::vector<nlohmann::json>& requests,
                           const DeviceProfile& target);

/// A finding in one line: "ibv_create_qp max_send_wr 8 > max_qp_wr 4: ibv_create_qp fails
/// with EINVAL", with "(64 times)" when more requests made it.
std::string finding_line(const Refusal& refusal);

/// Runs the program once under the verbs interposer and judges every target.
Result<PortCheckResult> port_check(const PortCheckOptions& options);

/// One report scenario per target (id "port-check.TARGET"): pass when it runs, fail when it
/// would fail (each refusal in the evidence), skip when a limit it asked about is unknown (fail
/// with `unknown_fails`: --unknown fail).
nlohmann::json target_scenario(const TargetOutcome& outcome, size_t run_id,
                               const std::string& program, bool unknown_fails = false);

}  // namespace faultline::harness::port_check
