// The kind table of the fault language: each kind once, what it does to a completion, who
// applies it, its own keys, and why an applier without it cannot apply it. A new kind is a
// row here and its enumerator; a new completion effect is applied by fault_endpoint.cpp (the
// decorator) and interpose/fault_plan.cpp (the interposers).
#include <array>

#include "faultline/transports/fault/fault_spec.hpp"

namespace faultline::transports::fault {

namespace {

constexpr unsigned kBoth = kDecorator | kInterposer;

constexpr std::array kKinds{
    FaultKindInfo{FaultKind::kRewriteStatus, "rewrite_status", kBoth,
                  CompletionEffect{.rewrite_status = true}, true,
                  "status,scribble,data,vendor_err,qp_error", ""},
    FaultKindInfo{FaultKind::kCorruptData, "corrupt_data", kInterposer,
                  CompletionEffect{.change_data = true}, true, "data,scribble,qp_error",
                  "faultline's own endpoints check every byte they receive: use rewrite_status "
                  "with scribble"},
    FaultKindInfo{FaultKind::kDropCompletion, "drop_completion", kBoth,
                  CompletionEffect{.drop = true}, true, "", ""},
    FaultKindInfo{FaultKind::kDelayCompletion, "delay_completion", kDecorator,
                  CompletionEffect{.delay = true}, true, "delay_ms",
                  "the interposers hand a program its completions as the provider returns them "
                  "(no clock of their own)"},
    FaultKindInfo{FaultKind::kDuplicateCompletion, "duplicate_completion", kBoth,
                  CompletionEffect{.duplicate = true}, true, "", ""},
    FaultKindInfo{FaultKind::kReplayCompletion, "replay_completion", kDecorator,
                  CompletionEffect{.replay = true}, true, "reuse_qp_number",
                  "the interposers do not follow a program's reconnects"},
    FaultKindInfo{FaultKind::kFailPost, "fail_post", kBoth, {}, true, "errno,post", ""},
    FaultKindInfo{FaultKind::kInline, "inline", kBoth, {}, false, "mode", ""},
    FaultKindInfo{FaultKind::kLimits,
                  "limits",
                  kBoth,
                  {},
                  false,
                  "profile,errno,inline,vendor_id,vendor_part_id,refuse_qp_types,refuse_operations",
                  ""},
    FaultKindInfo{FaultKind::kObserve,
                  "observe",
                  kInterposer,
                  {},
                  false,
                  "sites,offset,width,length",
                  "faultline's own endpoints record their requests in the report already"},
    FaultKindInfo{FaultKind::kSegmentCount, "segment_count", kBoth, {}, true, "mode,into,post", ""},
    FaultKindInfo{FaultKind::kDropSegment,
                  "drop_segment",
                  kProtocolHook,
                  {},
                  false,
                  "message,segment",
                  "it mutates faultline's kv messages, not a transport's"},
    FaultKindInfo{FaultKind::kAddSegment,
                  "add_segment",
                  kProtocolHook,
                  {},
                  false,
                  "message",
                  "it mutates faultline's kv messages, not a transport's"},
    FaultKindInfo{FaultKind::kReorderSegments,
                  "reorder_segments",
                  kProtocolHook,
                  {},
                  false,
                  "message",
                  "it mutates faultline's kv messages, not a transport's"},
    FaultKindInfo{FaultKind::kCorruptHeader,
                  "corrupt_header",
                  kProtocolHook,
                  {},
                  false,
                  "message,field",
                  "it mutates faultline's kv messages, not a transport's"},
    FaultKindInfo{FaultKind::kRewriteField,
                  "rewrite_field",
                  kBoth,
                  {},
                  true,
                  "offset,width,value,minus_one,equals,length",
                  ""},
};

static_assert(
    [] {
      for (size_t i = 0; i < kKinds.size(); ++i)
        if (static_cast<size_t>(kKinds[i].kind) != i) return false;
      return true;
    }(),
    "kKinds is in FaultKind's declaration order");

}  // namespace

std::span<const FaultKindInfo> fault_kinds() { return kKinds; }

const FaultKindInfo& kind_info(FaultKind kind) { return kKinds[static_cast<size_t>(kind)]; }

}  // namespace faultline::transports::fault
