#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/core/status.hpp"
#include "faultline/transports/completion_status.hpp"
#include "faultline/transports/fault/field_rewrite.hpp"
#include "faultline/transports/limit_table.hpp"
#include "faultline/transports/types.hpp"

namespace faultline::transports::fault {

/// Every kind of the fault language: scenario `faults`, `sut exec --fault` and `--plan`, SUT
/// scenario roles and the interposers' FAULTLINE_FAULTS all speak it (fault_kinds.cpp lists
/// each kind once, with what it does and who applies it).
enum class FaultKind {
  kRewriteStatus,        ///< a successful completion becomes an error
  kCorruptData,          ///< the completion stays successful; the data it delivered is not right
  kDropCompletion,       ///< the completion is never returned
  kDelayCompletion,      ///< the completion is held back for `delay_ms`
  kDuplicateCompletion,  ///< the completion is returned twice
  kReplayCompletion,     ///< returned again after the next connect (a stale completion)
  kFailPost,             ///< the N-th post returns an errno and nothing is posted
  kInline,               ///< inline forced off, or above the device's limit
  kLimits,               ///< the device is smaller: requests above a cap are refused
  kObserve,              ///< nothing changes: every resource request is logged (port-check)
  kSegmentCount,         ///< a posted work request has one segment fewer, or its bytes in more
  kDropSegment,          ///< protocol: a message loses one of its segments
  kAddSegment,           ///< protocol: a message gains a segment
  kReorderSegments,      ///< protocol: a message's segments are swapped
  kCorruptHeader,        ///< protocol: a header field is wrong
  kRewriteField,         ///< a field of a posted message holds another value (field_rewrite.hpp)
};

/// Who applies faults (bit flags): the decorator wraps faultline's own endpoints, the
/// interposers are loaded into programs faultline did not write, the protocol hooks mutate
/// faultline's kv messages.
enum Applier : unsigned {
  kDecorator = 1U << 0U,
  kInterposer = 1U << 1U,
  kProtocolHook = 1U << 2U,
};

/// What a completion fault does to the completion it fires on. A kind is one such effect (or
/// none, for a kind that is not about completions); appliers apply effects, not kinds.
struct CompletionEffect {
  bool rewrite_status = false;  ///< the completion carries `status`
  bool change_data = false;     ///< the data it delivered changes (`data`), its status stays
  bool drop = false;
  bool delay = false;
  bool duplicate = false;
  bool replay = false;
  bool any() const { return rewrite_status || change_data || drop || delay || duplicate || replay; }
};

/// One row of the kind table.
struct FaultKindInfo {
  FaultKind kind;
  std::string_view name;
  unsigned appliers;         ///< who applies it (Applier bits)
  CompletionEffect effect;   ///< for a completion fault
  bool firing;               ///< takes exactly one of nth, every, probability
  std::string_view keys;     ///< its own keys, comma-separated (beyond kind and the filters)
  std::string_view why_not;  ///< why an applier without it cannot apply it
};

/// The kind table, one row per FaultKind in declaration order.
std::span<const FaultKindInfo> fault_kinds();
const FaultKindInfo& kind_info(FaultKind kind);

/// Which operations a fault looks at: sends (and writes, reads), receives, or all.
enum class Side { kAny, kSend, kRecv };

/// What happens to the data a faulted receive (or read) delivered.
enum class DataAction {
  kKeep,
  kScribble,  ///< every byte it delivered changes
  kSuppress,  ///< the buffer holds what it held when the receive was posted
};

enum class InlineMode {
  kNone,
  kOff,         ///< no send or write is posted inline (faultline's endpoints: created with
                ///< max_inline 0; a program's post from memory it never registered fails)
  kForce,       ///< every send and write within the queue's inline room is posted inline
  kAboveLimit,  ///< sends and writes are posted inline above the queue's inline room
};

enum class SegmentMode {
  kFewer,  ///< the last segment (SGE, iov) left out: the message is short, or the receive
  kSplit,  ///< the same bytes across `split_into` segments
};

/// Which of the events matching a fault it fires on: exactly one of the three is set.
struct FiringRule {
  uint64_t nth = 0;          ///< the N-th matching event (1-based), once
  uint64_t every = 0;        ///< every k-th matching event
  double probability = 0.0;  ///< each matching event with probability p (seeded)

  /// Whether the `match`-th matching event (1-based) is faulted.
  bool fires(uint64_t match, std::mt19937_64& random) const;
};

/// The QP types and the opcodes a device may lack, by the names the device profiles use
/// (qp_types, operations): XRC for both of its ends, DRIVER for a driver's own type (EFA's
/// SRD, mlx5's DC).
inline constexpr std::array<std::string_view, 6> kQpTypeNames{"RC",  "UC",         "UD",
                                                              "XRC", "RAW_PACKET", "DRIVER"};
inline constexpr std::array<std::string_view, 2> kOperationNames{"RDMA_WRITE_WITH_IMM",
                                                                 "SEND_WITH_IMM"};

/// What a target has none of (its QP types or opcodes): a create or post of one fails with
/// `error_number`, as that driver fails it.
struct Refused {
  std::vector<std::string> names;
  int error_number = 22;  // EINVAL

  bool refuses(std::string_view name) const;
  /// `other`'s names added; its errno where it refuses anything.
  void add(const Refused& other);
};

/// A smaller device: the caps of a `limits` fault, one optional per row of limit_table.hpp.
struct LimitCaps {
// NOLINTNEXTLINE(bugprone-macro-parentheses): a type and a field name
#define FAULTLINE_CAP_FIELD(name, type, interposer) std::optional<limit_value_t<type>> name;
  FAULTLINE_DEVICE_LIMITS(FAULTLINE_CAP_FIELD)
#undef FAULTLINE_CAP_FIELD
#define FAULTLINE_CREATE_CAP_FIELD(name, type) std::optional<type> name;
  FAULTLINE_CREATE_LIMITS(FAULTLINE_CREATE_CAP_FIELD)
#undef FAULTLINE_CREATE_CAP_FIELD
  // Not caps: who the device says it is (programs such as perftest and UCX branch on them).
  std::optional<uint32_t> vendor_id;
  std::optional<uint32_t> vendor_part_id;
  int refusal_errno = 22;     ///< what a refused create returns (the target driver's; EINVAL)
  bool clamp_inline = false;  ///< an inline request above the cap is granted the cap (hns)
  Refused qp_types;           ///< `refuse_qp_types`: the QP types the target has not
  Refused operations;         ///< `refuse_operations`: the opcodes the target has not
  std::string source;         ///< where the caps came from ("device profile hns_roce-hip08")

  /// Each cap of `other` taken where it is smaller (or this has none); identity and refusal
  /// taken from `other`.
  void take_smaller(const LimitCaps& other);
  /// `limits` with every cap of a device limit in place of the device's value.
  DeviceLimits applied_to(DeviceLimits limits) const;
  /// The cap named `name` (a limit of the table, or vendor_id, vendor_part_id), if set.
  std::optional<uint64_t> cap(std::string_view name) const;
};

/// One fault of the language. Only the fields of its kind mean anything.
struct FaultSpec {
  FaultKind kind = FaultKind::kRewriteStatus;
  FiringRule when;

  // Completion faults.
  CompletionStatus status = CompletionStatus::kGeneralErr;
  uint32_t vendor_err = 0;              ///< interposers: the vendor error it carries
  DataAction data = DataAction::kKeep;  ///< `scribble: true` is `data: scribble`
  bool qp_error = false;                ///< verbs: the QP also moves to the error state
  std::chrono::milliseconds delay{0};   ///< delay_completion
  bool reuse_qp_number = false;         ///< replay_completion: on the new endpoint's number
  int error_number = 0;                 ///< fail_post: the errno the post returns
  InlineMode inline_mode = InlineMode::kNone;
  SegmentMode segment_mode = SegmentMode::kFewer;
  uint32_t split_into = 0;  ///< segment_count split: how many segments
  LimitCaps caps;
  bool map_sites = false;  ///< observe: every post and poll counted per call site (a sweep's map)
  std::string message;     ///< protocol kinds: the kv message type
  std::string target;      ///< protocol kinds: the segment or header field
  FieldRewrite field;  ///< rewrite_field: which field, what it becomes, which messages; observe:
                       ///< the field each matching post logs (width 0: none)

  // Filters.
  std::string role;         ///< scenario files: the role it applies to
  Side side = Side::kAny;   ///< fail_post, segment_count: which post (`post`); otherwise `side`
  std::string layer;        ///< ofi: the provider layer ("ofi_rxm", "tcp"); empty: outermost
  std::optional<int> rank;  ///< only in this rank's process (or a ring's agent)
  std::optional<Opcode> opcode;
  std::optional<uint32_t> qp_num;
  std::string site;  ///< interposers: only posts and polls from this call site (16 hex digits)

  const FaultKindInfo& info() const { return kind_info(kind); }
  std::string_view kind_name() const { return info().name; }
};

/// A parsed plan: its faults and the seed of their probabilities.
struct FaultSet {
  std::vector<FaultSpec> faults;
  uint64_t seed = 1;
};

/// The one parser of the fault language. `fault` is one fault object; `appliers` who will
/// apply it (a kind or key none of them applies is refused, saying why); `where` names the
/// fault in errors ("scenario.json: /faults/2", "--fault"). Refuses an unknown kind or key,
/// naming it and the ones allowed.
Result<FaultSpec> parse_fault(const nlohmann::json& fault, unsigned appliers,
                              const std::string& where);

/// A plan `{"faults": [...], "standing": [...], "seed": N}`, each fault parsed as by
/// parse_fault, the standing ones after the others (the conditions the run stands under:
/// `inline off` beneath every point of a sweep, a scenario role's `with`; all are applied
/// alike, `faultline sut` judges by the others); only `faults` is required.
Result<FaultSet> parse_fault_set(const nlohmann::json& plan, unsigned appliers,
                                 const std::string& origin);

/// One limit of limit_table.hpp as the fault language takes it.
struct LimitInfo {
  std::string_view name;
  uint64_t maximum;      ///< the largest value its type holds
  unsigned appliers;     ///< who enforces it (Applier bits)
  unsigned interposers;  ///< which interposer holds a program to it (kByVerbs, kByOfi)
};

/// Every limit of the table, in table order.
std::span<const LimitInfo> limit_infos();
/// The names of the limits one of `appliers` enforces, in table order.
std::vector<std::string> limit_names(unsigned appliers);

/// The value of the device limit `name` in `limits`; nullopt for one the device does not
/// advertise (or a name that is none).
std::optional<uint64_t> limit_value(const DeviceLimits& limits, std::string_view name);

}  // namespace faultline::transports::fault
