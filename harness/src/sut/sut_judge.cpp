// How a run under faults is judged: its verdict, evidence and hint from how it ended, the
// faults that fired (the interposers' events) and what the checker saw (docs: "Verdicts").
#include "sut_judge.hpp"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hang_waits.hpp"

namespace faultline::harness::sut {

namespace {

using nlohmann::json;

std::string signal_name(int signal) {
  const char* name = sigabbrev_np(signal);
  return name != nullptr ? std::string("SIG") + name : "signal " + std::to_string(signal);
}

// The first line after the first fault judged (a standing one is the run's condition, there
// from the start) that says an error was seen.
void find_first_error(ExecResult& result, const OutputChecker& checker,
                      const JudgedFaults& judged) {
  int64_t fault_ms = 0;
  for (const auto& event : result.events)
    if (judged.judged(event)) {
      fault_ms = event.value("time_ms", int64_t{0});
      break;
    }
  const auto line = checker.first_error_since(fault_ms);
  if (!line) return;
  result.first_error_line = line->text;
  if (fault_ms != 0) result.fault_to_error_ms = static_cast<double>(line->wall_ms - fault_ms);
}

// What the faults that fired did, from the interposers' `fault` events.
struct FiredFaults {
  size_t all = 0;
  size_t data = 0;        ///< changed the bytes the program read
  size_t shown_only = 0;  ///< `limits` showing a smaller device: a query answered, nothing refused
  size_t no_effect = 0;   ///< fired and changed nothing (no byte, no post)
  size_t tolerable = 0;   ///< changed what a correct program must take (inline on or off)
  std::map<std::string, size_t> by_kind;
  std::vector<std::string> no_effect_reasons;  ///< why, each said once
  std::vector<std::string> models;             ///< what the inline faults did, each said once
  bool only_shown() const { return all > 0 && shown_only == all; }
  bool changed_nothing() const { return all > 0 && no_effect == all; }
  /// Every fault one a correct program takes in its stride (limits it was shown, inline
  /// changed), at least one of them a change.
  bool only_tolerable() const { return tolerable > 0 && tolerable + shown_only + no_effect == all; }
  /// "rewrite_field 1, limits 1": which faults fired (a fault that fired and changed nothing a
  /// run reached, as the seed's segment bug behind its refused inline post, is named too).
  std::string kinds() const {
    std::string text;
    for (const auto& [kind, count] : by_kind)
      text += (text.empty() ? "" : ", ") + kind + " " + std::to_string(count);
    return text;
  }
};

void add_once(std::vector<std::string>& list, const std::string& text) {
  if (!text.empty() && std::find(list.begin(), list.end(), text) == list.end())
    list.push_back(text);
}

// Why a fault that fired changed nothing, or "" when it changed something: a data fault on a
// completion that carried no bytes, an inline room raised for sends none of which fit it.
std::string no_effect_reason(const json& event, bool room_used) {
  const std::string kind = event.value("kind", "");
  const bool data_kind = event.contains("data") || kind == "corrupt_data";
  if (data_kind && event.value("bytes_changed", uint64_t{1}) == 0) {
    const std::string which =
        event.contains("data_elsewhere")
            ? "a write with immediate's arrival, whose bytes are where the writer put them"
        : event.value("buffer_unseen", false)
            ? "receives at " + event.value("layer", std::string("?")) +
                  " whose buffers the interposer never saw posted, a provider's own beneath the "
                  "program"
            : "a zero-byte message";
    return kind + " matched completions that carried no bytes it could change: " + which +
           "; opcode=RECV at the program's layer reaches the data of sends, side=send with "
           "opcode=RDMA_WRITE that of writes";
  }
  const std::string call = event.value("call", "");
  if (kind == "inline" && call.find("create") != std::string::npos && !room_used)
    return "inline force raised the QPs' inline room and none of the program's sends fit it (" +
           event.value("inline_room", json::array()).dump() +
           " bytes asked and granted): it reaches only sends within that room";
  return "";
}

FiredFaults fired_faults(const std::vector<json>& events, const JudgedFaults& judged) {
  FiredFaults fired;
  const bool room_used = std::any_of(events.begin(), events.end(), [](const json& event) {
    return event.value("event", "") == "inline_room_used";
  });
  for (const auto& event : events) {
    if (!judged.judged(event)) continue;
    ++fired.all;
    ++fired.by_kind[event.value("kind", "")];
    if (const std::string reason = no_effect_reason(event, room_used); !reason.empty()) {
      ++fired.no_effect;
      add_once(fired.no_effect_reasons, reason);
      continue;
    }
    const bool data_kind = event.contains("data") || event.value("kind", "") == "corrupt_data";
    fired.data += data_kind;
    fired.shown_only += event.value("kind", "") == "limits" && event.contains("lowered");
    // Inline on or off changes how the bytes travel, never which: a correct program takes it.
    // An inline send refused (unregistered bytes, above the room) is no such change.
    // (above_limit: a post the provider refuses, verbs' "posted inline above" model,
    // libfabric's inject above its size, is none.)
    const bool inline_change =
        event.value("kind", "") == "inline" && !event.contains("unregistered") &&
        event.value("posted_as", "") != "inject" && event.value("errno", 0) == 0 &&
        event.value("model", "").find("above") == std::string::npos;
    fired.tolerable += inline_change;
    if (inline_change)  // verbs name the model; libfabric what the call was posted as
      add_once(fired.models, event.contains("model")
                                 ? event.value("model", "")
                                 : "posted as " + event.value("posted_as", std::string("?")));
  }
  return fired;
}

// The signal that ended the program: its own, or one a shell or launcher reports for a process
// it started as 128 + the signal (`sh -c`, mpirun: "exited on signal 11"), for the signals of
// a crash or an abort.
std::optional<int> ending_signal(const GroupRun& run) {
  if (run.signal) return run.signal;
  if (!run.exit_code) return std::nullopt;
  const int reported = *run.exit_code - 128;
  for (const int crash : {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE})
    if (reported == crash) return crash;
  return std::nullopt;
}

void judge_hang(ExecResult& result, const GroupRun& run, const ExecOptions& options) {
  result.verdict = SutVerdict::kHang;
  const std::string waits = hang_waits_on(run.stacks);
  const std::string waiting = waits.empty() ? "" : "it waits on " + waits + "; ";
  if (run.stopped) {
    result.evidence =
        "still running when it was stopped (its peer had ended, or faultline was interrupted); "
        "the stacks of every process are in `stacks`";
    result.hint = waiting +
                  "a peer that waits forever once the other side fails never learns of the "
                  "failure (no timeout, no error propagation)";
    return;
  }
  result.evidence = run.quiet ? "still running, no post or completion in its last " +
                                    std::to_string(options.quiet_limit.count()) +
                                    " ms and every thread asleep with no timeout (" +
                                    std::to_string(static_cast<int64_t>(run.seconds * 1000)) +
                                    " ms in all); the stacks of every process are in `stacks`"
                              : "still running after " + std::to_string(options.deadline.count()) +
                                    " ms; the stacks of every process are in `stacks`";
  result.hint = waiting + (result.faults_applied > 0
                               ? "after the fault nothing it waits for comes: a peer or a loop "
                                 "that never learns of the error"
                               : "it hangs without a fault: check the command on its own first");
}

std::string exit_text(const GroupRun& run, const std::string& error_line) {
  return "exit code " + std::to_string(run.exit_code.value_or(-1)) +
         (error_line.empty() ? "" : "; " + error_line);
}

// Planned faults, none fired or none that changed anything: the program failed by itself, or
// a filter missed.
void judge_unfired(ExecResult& result, const GroupRun& run, const OutputChecker& checker,
                   const FiredFaults& fired) {
  const bool ok = !checker.has_ok_pattern() || checker.ok_seen();
  std::string unfired = "no planned fault fired";
  if (fired.changed_nothing()) {
    unfired = std::to_string(fired.all) + " fault(s) fired and changed nothing: ";
    for (size_t i = 0; i < fired.no_effect_reasons.size(); ++i)
      unfired += (i > 0 ? "; " : "") + fired.no_effect_reasons[i];
  }
  if (run.exit_code == 0 && ok && !checker.wrong_seen()) {
    result.verdict = SutVerdict::kNotReached;
    result.evidence = unfired;
    result.hint =
        fired.changed_nothing()
            ? "the fault never reached what the program reads: narrow its filter to the data "
              "(above), or choose a kind that acts on this program's posts"
            : "a filter matched nothing (layer, side, rank, nth beyond the completions there "
              "were), or the program bypassed the interposers (static linking, its own provider "
              "path, direct verbs); the `instrumented` events say what was reached";
    return;
  }
  result.verdict = SutVerdict::kFail;
  const auto line = checker.first_error_since(0);
  result.evidence = unfired +
                    " and it failed by itself: " + exit_text(run, line ? line->text : "") +
                    (ok ? "" : "; the output lacks the checker's ok pattern");
  result.hint = "run the command without faults first: it must pass before a fault means anything";
}

// A fault fired and the program exited 0 saying nothing: masked only if a checker saw it right.
void judge_quiet_exit(ExecResult& result, const FiredFaults& fired, const OutputChecker& checker) {
  if (fired.only_shown() && (!checker.has_ok_pattern() || checker.ok_seen())) {
    result.verdict = SutVerdict::kPass;
    result.evidence =
        "runs within these limits: it was shown the smaller device and asked for nothing above "
        "its caps";
  } else if (fired.only_tolerable() && checker.has_ok_pattern() && checker.ok_seen() &&
             !checker.wrong_seen()) {
    // Not masked: nothing wrong reached it. Inline is how the bytes travel, a correct program
    // takes either.
    result.verdict = SutVerdict::kPass;
    result.evidence =
        "conforms: its sends' inline changed " + std::to_string(fired.tolerable) + " time(s) (";
    for (size_t i = 0; i < fired.models.size(); ++i)
      result.evidence += (i > 0 ? "; " : "") + fired.models[i];
    result.evidence += ") and its output is right";
  } else if (checker.has_ok_pattern()) {
    result.verdict = checker.ok_seen() ? SutVerdict::kMasked : SutVerdict::kSilentCorruption;
    result.evidence = checker.ok_seen()
                          ? "the fault fired and the program still exited 0 with the right output"
                          : "the fault fired, the program exited 0, its output lacks the ok "
                            "pattern";
  } else {
    result.verdict = SutVerdict::kUndetected;
    result.evidence =
        fired.data > 0
            ? "the fault changed data the program read (" + std::to_string(fired.data) +
                  " time(s)) and it exited 0 without an error: likely silent corruption, and "
                  "nothing checked its output"
            : "the fault fired and the program exited 0 without an error; nothing checked its "
              "output, so whether it masked the fault is unknown";
    result.hint =
        "give --ok a pattern of a correct run's output (and --wrong one of a wrong "
        "run's) so the run can be judged masked or silent corruption";
  }
}

// What the device refused that explains a failure, from the interposers' `post_refused`
// events: an inline send above the room the QP was granted is the device refusing inline; and
// the same refusal by a `limits` cap (a smaller device's inline room).
std::string device_refusal(const std::vector<json>& events) {
  for (const auto& event : events) {
    if (event.value("event", "") == "fault" && event.value("kind", "") == "limits" &&
        event.value("field", "") == "max_inline_data" && event.value("call", "") == "ibv_post_send")
      return "inline refused by the device: ibv_post_send of a " +
             std::to_string(event.value("asked", uint64_t{0})) + "-byte inline send above the " +
             std::to_string(event.value("cap", uint64_t{0})) +
             " bytes of inline room of the smaller device (limits max_inline_data)";
    if (event.value("event", "") != "post_refused" || !event.value("inline", false)) continue;
    const uint64_t bytes = event.value("bytes", uint64_t{0});
    const json room = event.value("inline_room", json());
    if (!room.is_number_unsigned() || bytes <= room.get<uint64_t>()) continue;
    return "inline refused by the device: " + event.value("call", std::string("the post")) +
           " of a " + std::to_string(bytes) + "-byte inline " +
           event.value("opcode", std::string("send")) + " on QP " +
           std::to_string(event.value("qp_num", uint64_t{0})) + " of " +
           event.value("device", std::string("the device")) + ", above the " +
           std::to_string(room.get<uint64_t>()) + " bytes of inline room it granted (errno " +
           std::to_string(event.value("errno", 0)) + ", " + event.value("error", std::string()) +
           ")";
  }
  return "";
}

// The last judged fault before a crash, as what the program was given: its call, and the
// segments and bytes it changed. One segment fewer of a one-segment message is a zero-byte
// message, which any sender may post: a program that crashes on it does so on legal input.
std::string last_fault_said(const std::vector<json>& events, const JudgedFaults& judged) {
  const json* last = nullptr;
  for (const auto& event : events)
    if (judged.judged(event)) last = &event;
  if (last == nullptr) return "";
  std::string said = last->value("kind", std::string("fault")) + " in " +
                     last->value("call", std::string("a call")) + " (" +
                     last->value("layer", std::string("")) + ")";
  const json segments = last->value("segments", json());
  const json bytes = last->value("bytes", json());
  if (segments.is_array() && segments.size() == 2)
    said += ": " + segments[0].dump() + " segment(s) became " + segments[1].dump();
  if (bytes.is_array() && bytes.size() == 2)
    said += ", " + bytes[0].dump() + " bytes became " + bytes[1].dump();
  if (segments.is_array() && segments.size() == 2 && segments[1] == 0)
    said += ": a zero-byte message, which any sender may post";
  return said;
}

}  // namespace

JudgedFaults::JudgedFaults(const json& plan) {
  auto kinds_of = [&plan](const char* list) {
    std::vector<std::string> kinds;
    const json faults = plan.value(list, json::array());
    for (const json& fault : faults)
      if (fault.is_object()) kinds.push_back(fault.value("kind", std::string("rewrite_status")));
    return kinds;
  };
  const auto judged_kinds = kinds_of("faults");
  for (auto& kind : kinds_of("standing"))
    if (std::find(judged_kinds.begin(), judged_kinds.end(), kind) == judged_kinds.end())
      standing_only_.push_back(std::move(kind));
}

bool JudgedFaults::judged(const json& event) const {
  if (event.value("event", "") != "fault") return false;
  const std::string kind = event.value("kind", "");
  return std::find(standing_only_.begin(), standing_only_.end(), kind) == standing_only_.end();
}

void judge(ExecResult& result, const GroupRun& run, const ExecOptions& options,
           const OutputChecker& checker) {
  // `observe` changes nothing: a run under it alone is judged as one without faults.
  const json faults = options.plan.value("faults", json::array());
  const bool faults_planned = std::any_of(faults.begin(), faults.end(), [](const json& fault) {
    return !fault.is_object() || fault.value("kind", std::string()) != "observe";
  });
  const JudgedFaults judged(options.plan);
  const FiredFaults fired = fired_faults(result.events, judged);
  find_first_error(result, checker, judged);
  if (run.stopped || run.timed_out) {
    judge_hang(result, run, options);
  } else if (ending_signal(run) == SIGABRT && fired.all > 0 && !result.first_error_line.empty()) {
    // abort() after printing the error (Gloo's and UCX's fatal errors, assertions): a
    // deliberate stop.
    result.verdict = SutVerdict::kDetected;
    result.evidence = "aborted (SIGABRT) after reporting: " + result.first_error_line;
  } else if (ending_signal(run) == SIGABRT && fired.all == 0 && !result.first_error_line.empty()) {
    // The same stop with no fault having fired: the program's own check failed (StepMesh's
    // PS_CHECK on a device that refuses its inline size, or on a message it built wrong). A
    // failure of its own, said in its words, not a crash.
    result.verdict = SutVerdict::kFail;
    result.evidence =
        "aborted (SIGABRT) by its own check, no fault having fired: " + result.first_error_line;
    result.hint = faults_planned ? "the program failed before any planned fault fired: run it "
                                   "without faults first"
                                 : "the program's own check stopped it: its line says what it "
                                   "found wrong";
  } else if (const auto signal = ending_signal(run)) {
    result.verdict = SutVerdict::kCrashed;
    result.evidence = "killed by " + signal_name(*signal) +
                      (run.signal ? ""
                                  : " (exit code " + std::to_string(*run.exit_code) +
                                        ": a process it started, as its shell or launcher "
                                        "reports it)");
    if (fired.all > 0)
      result.evidence += "; after faults fired: " + fired.kinds() +
                         "; the last: " + last_fault_said(result.events, judged);
  } else if (faults_planned && (fired.all == 0 || fired.changed_nothing())) {
    judge_unfired(result, run, checker, fired);
  } else if (checker.wrong_seen()) {
    result.verdict = SutVerdict::kSilentCorruption;
    result.evidence = "the output matches the checker's wrong-data pattern";
  } else if (!faults_planned) {
    const bool ok = !checker.has_ok_pattern() || checker.ok_seen();
    result.verdict = run.exit_code == 0 && ok ? SutVerdict::kPass : SutVerdict::kFail;
    if (result.verdict == SutVerdict::kFail)
      result.evidence =
          exit_text(run, "") + (ok ? "" : "; the output lacks the checker's ok pattern");
  } else if (run.exit_code != 0 || !result.first_error_line.empty()) {
    result.verdict = SutVerdict::kDetected;
    result.evidence = exit_text(run, result.first_error_line);
  } else {
    judge_quiet_exit(result, fired, checker);
  }
  if (result.verdict == SutVerdict::kDetected)
    result.evidence += "; faults fired: " + fired.kinds();
  if (const std::string refusal = device_refusal(result.events);
      !refusal.empty() && result.verdict != SutVerdict::kPass &&
      result.verdict != SutVerdict::kMasked)
    result.evidence += "; " + refusal;
}

}  // namespace faultline::harness::sut
