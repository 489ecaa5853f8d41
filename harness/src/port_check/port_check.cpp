#include "faultline/harness/port_check/port_check.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "faultline/harness/base/strict_json.hpp"
#include "faultline/harness/sut/fault_points.hpp"

namespace faultline::harness::port_check {

namespace {

using nlohmann::json;

// What each request field is held against in a profile, and how a driver says no.
struct Rule {
  const char* call_prefix;  ///< ibv_create_qp matches ibv_create_qp_ex too
  const char* field;
  const char* limit;
};

constexpr Rule kRules[] = {
    {"ibv_create_qp", "max_send_wr", "max_qp_wr"},
    {"ibv_create_qp", "max_recv_wr", "max_recv_wr"},
    {"ibv_create_qp", "max_send_sge", "max_send_sge"},
    {"ibv_create_qp", "max_recv_sge", "max_recv_sge"},
    {"ibv_create_qp", "max_inline_data", "max_inline_data"},
    {"ibv_create_cq", "cqe", "max_cqe"},
    {"ibv_create_srq", "max_wr", "max_srq_wr"},
    {"ibv_create_srq", "max_sge", "max_srq_sge"},
    {"ibv_reg_mr", "length", "max_mr_size"},
    {"ibv_modify_qp", "max_rd_atomic", "max_qp_rd_atom"},
    {"ibv_modify_qp", "max_dest_rd_atomic", "max_qp_rd_atom"},
    {"ibv_modify_qp", "path_mtu", "max_mtu"},
    {"ibv_modify_qp", "atomic", "atomic_cap"},  // 1 (remote atomics) > 0 (IBV_ATOMIC_NONE)
    {"ibv_post_send", "atomic", "atomic_cap"},
    {"ibv_post_send", "inline_bytes", "max_inline_data"},
    // How many the program held at once (the interposer logs each new most).
    {"ibv_create_qp", "held", "max_qp"},
    {"ibv_create_cq", "held", "max_cq"},
    {"ibv_reg_mr", "held", "max_mr"},
    {"ibv_alloc_pd", "held", "max_pd"},
    {"ibv_create_srq", "held", "max_srq"},
};

// What a target supports or not, besides counts: a request's field, the profile's block.
struct Feature {
  const char* call_prefix;
  const char* field;  ///< as the interposer logs it
  const char* block;  ///< DeviceProfile::supports
  const char* noun;
};

constexpr Feature kFeatures[] = {
    {"ibv_create_qp", "qp_type", "qp_types", "queue pairs"},
    {"ibv_post_send", "opcode", "operations", "work requests"},
};

struct Unsupported {
  const char* field;
  const char* block;
  const char* noun;
  std::string name;
};

// The feature `call` asks for that the target refuses; one it may not know goes into `unknown`
// ("qp_types" when the profile has no such block, "qp_types.XRC" when it has no word on it).
std::optional<Unsupported> unsupported(const std::string& call, const json& asked,
                                       const DeviceProfile& target,
                                       std::set<std::string>& unknown) {
  for (const Feature& feature : kFeatures) {
    const std::string name = text_at(asked, feature.field);
    if (call.rfind(feature.call_prefix, 0) != 0 || name.empty()) continue;
    const auto block = target.supports.find(feature.block);
    if (block == target.supports.end()) {
      unknown.insert(feature.block);
    } else if (const auto said = block->second.find(name); said == block->second.end()) {
      unknown.insert(std::string(feature.block) + "." + name);
    } else if (!said->second) {
      return Unsupported{feature.field, feature.block, feature.noun, name};
    }
  }
  return std::nullopt;
}

// A count the program asked for (0 or absent: nothing asked).
std::optional<uint64_t> count_of(const json& value) {
  if (value.is_number_unsigned() && value.get<uint64_t>() > 0) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() > 0)
    return static_cast<uint64_t>(value.get<int64_t>());
  return std::nullopt;
}

std::optional<uint64_t> limit_of(const DeviceProfile& target, const std::string& limit) {
  auto found = target.limits.find(limit);
  if (found != target.limits.end()) return found->second;
  // verbs has one max_qp_wr for both queues: a profile without max_recv_wr means max_qp_wr.
  if (limit == "max_recv_wr") return limit_of(target, "max_qp_wr");
  return std::nullopt;
}

std::string how_refused(const Rule& rule, const DeviceProfile& target) {
  const std::string field = rule.field;
  const std::string call = rule.call_prefix;
  if (field == "max_inline_data" && target.clamps_inline)
    return "";  // granted the cap: a larger inline post is what fails
  if (field == "inline_bytes") return "ibv_post_send fails (EINVAL)";
  if (field == "atomic") return "the target has no atomics (atomic_cap NONE)";
  if (field == "path_mtu") return "above the target's largest MTU: ibv_modify_qp fails";
  if (field == "held")
    return "one more than the target holds: " + call + " fails with " + target.refusal_errno;
  if (call == "ibv_reg_mr") return "ibv_reg_mr fails";
  return call + " fails with " + target.refusal_errno;
}

// The first frames of the refusals as addr2line reads them: "function at file:line
// (OBJECT+0xOFFSET)". One addr2line per object for all its frames (a large binary's line
// table takes a while to read); a frame it cannot place stays as it was.
void symbolize_refusals(std::vector<TargetOutcome>& outcomes) {
  std::map<std::string, std::vector<std::string>> offsets;  // object -> "0x..." offsets
  for (const auto& outcome : outcomes) {
    for (const auto& refusal : outcome.refusals) {
      if (refusal.stack.empty() || !refusal.stack.front().is_string()) continue;
      const sut::StackFrame frame = sut::parse_frame(refusal.stack.front().get<std::string>());
      if (frame.offset.empty()) continue;
      auto& list = offsets[frame.object];
      if (std::find(list.begin(), list.end(), frame.offset) == list.end())
        list.push_back(frame.offset);
    }
  }
  std::map<std::string, std::string> placed;  // frame -> text
  for (const auto& [object, list] : offsets) {
    std::string command = "addr2line -f -C -p -e '";
    for (char c : object) command += c == '\'' ? std::string("'\\''") : std::string(1, c);
    command += "'";
    for (const auto& offset : list) command += " " + offset;
    FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
    if (pipe == nullptr) continue;
    char line[1024];
    for (const auto& offset : list) {
      if (std::fgets(line, sizeof line, pipe) == nullptr) break;
      std::string text = line;
      while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
      if (!text.empty() && text.rfind("??", 0) != 0)
        placed[object + "+" + offset] = text + " (" + object + "+" + offset + ")";
    }
    pclose(pipe);
  }
  for (auto& outcome : outcomes) {
    for (auto& refusal : outcome.refusals) {
      if (refusal.stack.empty() || !refusal.stack.front().is_string()) continue;
      const sut::StackFrame frame = sut::parse_frame(refusal.stack.front().get<std::string>());
      auto found = placed.find(frame.object + "+" + frame.offset);
      if (found != placed.end()) refusal.stack.front() = found->second;
    }
  }
}

}  // namespace

TargetOutcome judge_target(const std::vector<json>& requests, const DeviceProfile& target) {
  TargetOutcome outcome{target.name, "runs"};
  std::set<std::string> unknown;
  std::map<std::string, std::pair<std::string, uint64_t>> above_bound;  // limit: field, most
  // The same finding again (a create in a loop, each QP's modify) is counted on the first,
  // its other call sites listed once.
  auto add = [&](Refusal refusal) {
    for (auto& seen : outcome.refusals) {
      // More held later: the one finding says the most.
      if (refusal.field == "held" && seen.field == "held" && seen.limit == refusal.limit) {
        if (refusal.asked > seen.asked) seen = std::move(refusal);
        return;
      }
      if (seen.call != refusal.call || seen.what != refusal.what) continue;
      ++seen.count;
      if (!refusal.stack.empty() && refusal.stack.front().is_string() &&
          (seen.stack.empty() || refusal.stack.front() != seen.stack.front()) &&
          std::find(seen.sites.begin(), seen.sites.end(), refusal.stack.front()) ==
              seen.sites.end())
        seen.sites.push_back(refusal.stack.front());
      return;
    }
    outcome.refusals.push_back(std::move(refusal));
  };
  for (const auto& request : requests) {
    // Refused by the device here too: a probe the program handled, or a failure that is not
    // the port's (sut exec's verdict says which).
    if (request.value("granted", json()) == false) continue;
    const std::string call = request.value("call", std::string());
    const json asked = request.value("asked", json::object());
    const json stack = request.value("stack", json::array());
    // A QP type the target has no queue pairs of, an opcode it has no work request for: that
    // call fails, before any count is held against a limit.
    if (const auto refused = unsupported(call, asked, target, unknown)) {
      add({call, refused->field, refused->block, 0, 0, target.source_of(refused->block), stack,
           call + " fails with " + target.errno_of(refused->block) + " (" + target.name +
               " has no " + refused->name + " " + refused->noun + ")",
           std::string(refused->field) + " " + refused->name});
      continue;
    }
    for (const Rule& rule : kRules) {
      if (call.rfind(rule.call_prefix, 0) != 0 || !asked.contains(rule.field)) continue;
      const auto value = count_of(asked.at(rule.field));
      if (!value) continue;
      const auto allowed = limit_of(target, rule.limit);
      if (!allowed) {
        // Known only from below: up to the bound it fits; above it, no one can say (named
        // once, with the most asked).
        const auto bound = target.at_least.find(rule.limit);
        if (bound == target.at_least.end()) {
          unknown.insert(rule.limit);
        } else if (*value > bound->second) {
          auto& most = above_bound[rule.limit];
          if (*value > most.second) most = {rule.field, *value};
        }
        continue;
      }
      if (*value <= *allowed) continue;
      const std::string how = how_refused(rule, target);
      if (how.empty()) continue;
      add({call, rule.field, rule.limit, *value, *allowed, target.source_of(rule.limit), stack, how,
           std::string(rule.field) + " " + std::to_string(*value) + " > " + rule.limit + " " +
               std::to_string(*allowed)});
    }
  }
  for (const auto& [limit, most] : above_bound)
    unknown.insert(limit + " (" + most.first + " " + std::to_string(most.second) +
                   ", known only to be at least " + std::to_string(target.at_least.at(limit)) +
                   ")");
  outcome.unknown.assign(unknown.begin(), unknown.end());
  if (!outcome.refusals.empty()) {
    outcome.verdict = "would-fail";
  } else if (!outcome.unknown.empty()) {
    outcome.verdict = "unknown";
  }
  return outcome;
}

std::string finding_line(const Refusal& refusal) {
  return refusal.call + " " + refusal.what + ": " + refusal.how +
         (refusal.count > 1 ? " (" + std::to_string(refusal.count) + " times)" : "");
}

namespace {

// Why a run showed no request: no device on this host, a program the interposer never
// reached, or one that asked the device for nothing port-check holds.
std::string why_nothing_seen(const sut::ExecResult& run) {
  std::error_code error;
  const std::filesystem::directory_iterator devices("/sys/class/infiniband", error);
  if (error || devices == std::filesystem::directory_iterator())
    return "no RDMA device on this host (/sys/class/infiniband lists none): the program could "
           "open none";
  const bool reached = std::any_of(run.events.begin(), run.events.end(), [](const json& event) {
    return event.value("event", std::string()) == "instrumented";
  });
  if (!reached)
    return "the program never reached libibverbs through the interposer: it opened no device, "
           "or bypassed the preload (a static or setuid binary)";
  return "the program opened a device but asked it for nothing port-check holds against a "
         "profile (no device query, PD, CQ, QP, SRQ or MR)";
}

}  // namespace

Result<PortCheckResult> port_check(const PortCheckOptions& options) {
  json faults = json::array({{{"kind", "observe"}}});
  if (options.enforced) faults.push_back(options.enforced->limits_fault());
  sut::ExecOptions exec;
  exec.command = options.command;
  exec.plan = {{"faults", faults}};
  exec.deadline = options.deadline;
  exec.interpose_dir = options.interpose_dir;
  exec.work_dir = options.work_dir;
  auto run = sut::exec_under_faults(exec);
  if (!run.ok()) return std::move(run).take_error();
  PortCheckResult result;
  result.run = std::move(run).value();
  for (const auto& event : result.run.events)
    if (event.value("event", std::string()) == "request") result.requests.push_back(event);
  const std::string nothing_seen = result.requests.empty() ? why_nothing_seen(result.run) : "";
  for (const auto& target : options.targets) {
    result.targets.push_back(judge_target(result.requests, target));
    if (nothing_seen.empty()) continue;
    result.targets.back().verdict = "not-reached";
    result.targets.back().not_reached = nothing_seen;
  }
  symbolize_refusals(result.targets);
  return result;
}

json target_scenario(const TargetOutcome& outcome, size_t run_id, const std::string& program,
                     bool unknown_fails) {
  std::string evidence;
  for (const auto& refusal : outcome.refusals) {
    if (!evidence.empty()) evidence += "\n";
    evidence += finding_line(refusal) + " (" + refusal.source + ")";
    if (!refusal.stack.empty()) evidence += "; at " + refusal.stack.front().get<std::string>();
    for (const auto& site : refusal.sites) evidence += ", " + site.get<std::string>();
  }
  std::string unknown;
  for (const auto& limit : outcome.unknown) unknown += (unknown.empty() ? "" : ", ") + limit;
  const std::string verdict = outcome.verdict == "runs"                         ? "pass"
                              : outcome.verdict == "would-fail"                 ? "fail"
                              : (outcome.verdict == "unknown" && unknown_fails) ? "fail"
                                                                                : "skip";
  std::string observed = outcome.verdict == "runs" ? "every request within its limits"
                         : outcome.verdict == "not-reached"
                             ? "nothing checked: " + outcome.not_reached
                         : outcome.verdict == "unknown"
                             ? "cannot say: the profile does not know " + unknown
                             : "the first call that would fail: " + outcome.refusals[0].call + " " +
                                   outcome.refusals[0].what + " (" +
                                   std::to_string(outcome.refusals.size()) + " finding(s))";
  if (outcome.verdict == "would-fail" && !unknown.empty()) observed += "; unknown: " + unknown;
  return {{"id", "port-check." + outcome.target},
          {"tags", {"port-check"}},
          {"source", program},
          {"sha256", ""},
          {"seed", 0},
          {"run_id", run_id},
          {"agents",
           {{"initiator", "program"}, {"responder", outcome.target}, {"ranks", json::array()}}},
          {"verdict", verdict},
          {"expected", "every resource request within " + outcome.target + "'s limits"},
          {"observed", observed},
          {"evidence", evidence},
          {"hint", verdict == "fail" ? "size the request from the device's attributes "
                                       "(ibv_query_device) instead of a constant, or cap it "
                                       "for this target"
                                     : ""},
          {"duration_ms", 0},
          {"sides", json::object()}};
}

}  // namespace faultline::harness::port_check
