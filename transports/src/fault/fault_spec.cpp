// The one parser of the fault language. Strict: an unknown kind or key is an error naming it
// and the ones allowed; a kind or key the appliers at hand cannot apply is refused, saying why.
#include "faultline/transports/fault/fault_spec.hpp"

#include <algorithm>
#include <array>

#include "faultline/core/join.hpp"

namespace faultline::transports::fault {

namespace {

// A value as an error message shows it: JSON text, bytes that are not UTF-8 (a compact
// `--fault` is the user's text) replaced rather than thrown on.
std::string shown(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

using nlohmann::json;

struct KeyRule {
  std::string_view name;
  unsigned appliers;
  std::string_view why_not;
};

constexpr unsigned kAll = kDecorator | kInterposer | kProtocolHook;

// The filters, which every kind takes, and the keys kinds list as their own.
constexpr std::array kKeyRules{
    KeyRule{"role", kDecorator | kProtocolHook,
            "a program's faults belong to its role already (roles/N/faults of a SUT scenario)"},
    KeyRule{"rank", kAll, ""},
    KeyRule{"side", kInterposer, "faultline's own endpoints match a completion by its opcode"},
    KeyRule{"layer", kInterposer, "faultline's own endpoints read one layer"},
    KeyRule{"opcode", kDecorator | kInterposer, ""},
    KeyRule{"qp_num", kInterposer, "faultline's own endpoints get their qp numbers at run time"},
    KeyRule{"site", kInterposer, "a site is a call stack of a program under `faultline sut`"},
    KeyRule{"sites", kInterposer, ""},
    KeyRule{"nth", kDecorator | kInterposer, ""},
    KeyRule{"every", kDecorator | kInterposer, ""},
    KeyRule{"probability", kDecorator | kInterposer, ""},
    KeyRule{"status", kDecorator | kInterposer, ""},
    KeyRule{"scribble", kDecorator | kInterposer, ""},
    KeyRule{"data", kInterposer, "faultline's own endpoints take scribble: true"},
    KeyRule{"vendor_err", kInterposer, "faultline's own completions carry no vendor error"},
    KeyRule{"qp_error", kInterposer, "use a modify_to_error step in the scenario"},
    KeyRule{"delay_ms", kDecorator, ""},
    KeyRule{"reuse_qp_number", kDecorator, ""},
    KeyRule{"errno", kDecorator | kInterposer, ""},
    KeyRule{"post", kDecorator | kInterposer, ""},
    KeyRule{"mode", kDecorator | kInterposer, ""},
    KeyRule{"into", kDecorator | kInterposer, ""},
    KeyRule{"profile", kDecorator,
            "a program is given a profile with port-check --enforce, which writes its caps"},
    KeyRule{"inline", kInterposer, "faultline's own endpoints refuse an inline size above the cap"},
    KeyRule{"vendor_id", kInterposer, "faultline's own endpoints do not branch on the vendor"},
    KeyRule{"vendor_part_id", kInterposer, "faultline's own endpoints do not branch on the vendor"},
    KeyRule{"refuse_qp_types", kInterposer, "faultline's own endpoints make RC QPs only"},
    KeyRule{"refuse_operations", kInterposer, "faultline's own endpoints post no immediate data"},
    KeyRule{"message", kProtocolHook, ""},
    KeyRule{"segment", kProtocolHook, ""},
    KeyRule{"field", kProtocolHook, ""},
    KeyRule{"offset", kDecorator | kInterposer, ""},
    KeyRule{"width", kDecorator | kInterposer, ""},
    KeyRule{"value", kDecorator | kInterposer, ""},
    KeyRule{"minus_one", kDecorator | kInterposer, ""},
    KeyRule{"equals", kDecorator | kInterposer, ""},
    KeyRule{"length", kDecorator | kInterposer, ""},
};

constexpr std::string_view kFilterKeys = "role,rank,side,layer,opcode,qp_num,site";

std::string who(unsigned appliers) {
  std::string names;
  auto add = [&names](const char* name) {
    names += (names.empty() ? "" : " or ") + std::string(name);
  };
  if ((appliers & kDecorator) != 0) add("faultline's own endpoints (scenario files)");
  if ((appliers & kInterposer) != 0) add("programs under the interposers (sut, port-check)");
  if ((appliers & kProtocolHook) != 0) add("faultline's kv protocol (scenario files)");
  return names;
}

std::vector<std::string> split(std::string_view list) {
  std::vector<std::string> items;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    items.emplace_back(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return items;
}

// Reads one fault object's values, naming the fault and the key in each error.
class FaultReader {
 public:
  FaultReader(const json& fault, std::string where) : fault_(fault), where_(std::move(where)) {}

  // "FILE: /faults/2/nth: expected ..." for a document, "--fault SPEC: nth: expected ..." for
  // an option.
  Error bad(std::string_view key, const std::string& expected) const {
    const bool option = where_.rfind("--", 0) == 0;
    const std::string separator = key.empty() ? "" : option ? ": " : "/";
    return Error{ErrorCode::kInvalidArgument,
                 where_ + separator + std::string(key) + ": expected " + expected};
  }
  bool has(const char* key) const { return fault_.contains(key); }

  // An unsigned integer no larger than `max`; nullopt when absent.
  Result<std::optional<uint64_t>> count(std::string_view key, uint64_t max = UINT64_MAX) const {
    const auto found = fault_.find(key);
    if (found == fault_.end()) return std::optional<uint64_t>{};
    // Parsed text holds a whole number as unsigned; one built in a program may be signed.
    const bool whole =
        found->is_number_unsigned() || (found->is_number_integer() && found->get<int64_t>() >= 0);
    if (!whole || found->get<uint64_t>() > max)
      return bad(key, "an integer from 0 to " + std::to_string(max));
    return std::optional<uint64_t>{found->get<uint64_t>()};
  }

  // One of `choices` (a string); `fallback` when absent.
  Result<std::string> choice(const char* key, const std::vector<std::string>& choices,
                             const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& value = fault_.at(key);
    if (value.is_string() &&
        std::find(choices.begin(), choices.end(), value.get<std::string>()) != choices.end())
      return value.get<std::string>();
    return bad(key, "one of " + join(choices));
  }

  Result<bool> flag(const char* key) const {
    if (!has(key)) return false;
    if (!fault_.at(key).is_boolean()) return bad(key, "true or false");
    return fault_.at(key).get<bool>();
  }

  Result<std::string> text(const char* key) const {
    if (!has(key)) return std::string();
    if (!fault_.at(key).is_string() || fault_.at(key).get<std::string>().empty())
      return bad(key, "a non-empty string");
    return fault_.at(key).get<std::string>();
  }

  const json& fault() const { return fault_; }
  const std::string& where() const { return where_; }

 private:
  const json& fault_;
  std::string where_;
};

#define FAULTLINE_TRY(target, expression)                                      \
  do {                                                                         \
    auto faultline_value = (expression);                                       \
    if (!faultline_value.ok()) return std::move(faultline_value).take_error(); \
    (target) = std::move(faultline_value).value();                             \
  } while (false)

Result<FaultKind> read_kind(const FaultReader& reader, unsigned appliers) {
  const json kind = reader.fault().value("kind", json("rewrite_status"));
  std::vector<std::string> names;
  for (const auto& info : fault_kinds())
    if ((info.appliers & appliers) != 0) names.emplace_back(info.name);
  const auto kinds = fault_kinds();
  const auto info = std::find_if(kinds.begin(), kinds.end(),
                                 [&](const FaultKindInfo& row) { return kind == row.name; });
  if (info == kinds.end())
    return reader.bad("kind", "one of " + join(names) + "; got " + shown(kind));
  if ((info->appliers & appliers) == 0)
    return reader.bad("kind", "a kind " + who(appliers) + " can be given; " +
                                  std::string(info->name) + " applies to " + who(info->appliers) +
                                  " only: " + std::string(info->why_not));
  return info->kind;
}

// Who applies a key of a fault of kind `info`, and why others do not.
std::pair<unsigned, std::string_view> applied_by(const std::string& key,
                                                 const FaultKindInfo& info) {
  for (const KeyRule& rule : kKeyRules)
    if (rule.name == key) return {rule.appliers, rule.why_not};
  for (const LimitInfo& limit : limit_infos())
    if (limit.name == key) return {limit.appliers, "not a limit they enforce"};
  return {info.appliers, ""};  // "kind"
}

// Where a key that `kind` does not take belongs: "; \"inline\" is a kind: kind=inline,..." or
// "; mode is a key of kind inline", so a fault missing its kind is told which it meant.
std::string where_key_belongs(const std::string& key) {
  for (const auto& info : fault_kinds())
    if (info.name == key)
      return "; \"" + key + "\" is a kind: kind=" + key +
             (info.keys.empty() ? "" : " with its keys (" + std::string(info.keys) + ")");
  std::vector<std::string> kinds;
  for (const auto& info : fault_kinds()) {
    const auto keys = split(info.keys);
    const bool limit = info.kind == FaultKind::kLimits &&
                       std::any_of(limit_infos().begin(), limit_infos().end(),
                                   [&](const LimitInfo& row) { return row.name == key; });
    if (limit || std::find(keys.begin(), keys.end(), key) != keys.end())
      kinds.emplace_back(info.name);
  }
  if (kinds.empty()) return "";
  return "; " + key + " is a key of kind " + join(kinds) + " (kind=" + kinds.front() + ")";
}

// Every key is one the kind takes, and one an applier at hand applies.
Status check_keys(const FaultReader& reader, const FaultKindInfo& info, unsigned appliers) {
  std::vector<std::string> takes = {"kind"};
  for (const auto& key : split(kFilterKeys)) takes.push_back(key);
  if (info.firing)
    for (const char* key : {"nth", "every", "probability"}) takes.emplace_back(key);
  for (const auto& key : split(info.keys)) takes.push_back(key);
  if (info.kind == FaultKind::kLimits)
    for (const LimitInfo& limit : limit_infos()) takes.emplace_back(limit.name);
  const unsigned at_hand = appliers & info.appliers;
  std::vector<std::string> allowed;
  for (const auto& key : takes)
    if ((applied_by(key, info).first & at_hand) != 0) allowed.push_back(key);
  for (const auto& [key, value] : reader.fault().items()) {
    if (std::find(takes.begin(), takes.end(), key) == takes.end())
      return reader.bad(key, "a key of kind " + std::string(info.name) + " (" + join(allowed) +
                                 "); \"" + key + "\" is none" + where_key_belongs(key));
    const auto [by, why_not] = applied_by(key, info);
    if ((by & at_hand) == 0)
      return reader.bad(key, "no " + key + " here: it is not applied to " + who(at_hand) +
                                 (why_not.empty() ? "" : " (" + std::string(why_not) + ")"));
  }
  return Status{};
}

Status read_firing(const FaultReader& reader, FaultSpec& spec) {
  std::optional<uint64_t> nth;
  std::optional<uint64_t> every;
  FAULTLINE_TRY(nth, reader.count("nth"));
  FAULTLINE_TRY(every, reader.count("every"));
  spec.when.nth = nth.value_or(0);
  spec.when.every = every.value_or(0);
  if (reader.has("probability")) {
    const json& p = reader.fault().at("probability");
    if (!p.is_number() || !(p.get<double>() > 0 && p.get<double>() <= 1))
      return reader.bad("probability", "a number above 0, at most 1");
    spec.when.probability = p.get<double>();
  }
  std::vector<std::string> given;
  if (spec.when.nth != 0) given.emplace_back("nth");
  if (spec.when.every != 0) given.emplace_back("every");
  if (spec.when.probability > 0) given.emplace_back("probability");
  if (given.empty()) return reader.bad("", "one of the fields nth or every or probability");
  if (given.size() > 1)
    return reader.bad("", "exactly one of the fields nth, every or probability; got " + given[0] +
                              " and " + given[1]);
  return Status{};
}

Status read_filters(const FaultReader& reader, FaultSpec& spec) {
  FAULTLINE_TRY(spec.role, reader.text("role"));
  FAULTLINE_TRY(spec.layer, reader.text("layer"));
  const bool post_fault =
      spec.kind == FaultKind::kFailPost || spec.kind == FaultKind::kSegmentCount;
  const char* side_key = post_fault ? "post" : "side";
  std::string side;
  FAULTLINE_TRY(side, reader.choice(side_key, {"send", "recv", "any"}, "any"));
  spec.side = side == "send" ? Side::kSend : side == "recv" ? Side::kRecv : Side::kAny;
  if (spec.kind == FaultKind::kRewriteField && spec.side == Side::kRecv)
    return reader.bad(side_key, "send or any: a field is rewritten in what a send or write posts");
  std::optional<uint64_t> rank;
  std::optional<uint64_t> qp_num;
  FAULTLINE_TRY(rank, reader.count("rank", INT32_MAX));
  FAULTLINE_TRY(qp_num, reader.count("qp_num", UINT32_MAX));
  if (rank) spec.rank = static_cast<int>(*rank);
  if (qp_num) spec.qp_num = static_cast<uint32_t>(*qp_num);
  FAULTLINE_TRY(spec.site, reader.text("site"));
  if (!spec.site.empty() && (spec.site.size() != 16 ||
                             spec.site.find_first_not_of("0123456789abcdef") != std::string::npos))
    return reader.bad("site",
                      "a call site's id: 16 hex digits, as a sweep's `site` events name it");
  if (reader.has("opcode")) {
    const json& opcode = reader.fault().at("opcode");
    spec.opcode = opcode.is_string() ? opcode_from_string(opcode.get<std::string>()) : std::nullopt;
    if (!spec.opcode) {
      std::vector<std::string> names;
      for (Opcode op : kAllOpcodes) names.emplace_back(to_string(op));
      return reader.bad("opcode", "one of " + join(names) + "; got " + shown(opcode));
    }
  }
  return Status{};
}

Status read_segment_count(const FaultReader& reader, FaultSpec& spec) {
  std::string mode;
  FAULTLINE_TRY(mode, reader.choice("mode", {"fewer", "split"}, ""));
  if (mode.empty()) return reader.bad("mode", "fewer or split");
  spec.segment_mode = mode == "fewer" ? SegmentMode::kFewer : SegmentMode::kSplit;
  std::optional<uint64_t> into;
  FAULTLINE_TRY(into, reader.count("into", 64));
  if (spec.segment_mode == SegmentMode::kSplit && (!into || *into < 2))
    return reader.bad("into", "split: how many segments the bytes go in, from 2 to 64");
  if (spec.segment_mode == SegmentMode::kFewer && into)
    return reader.bad("into", "no into with mode fewer (one segment fewer)");
  spec.split_into = static_cast<uint32_t>(into.value_or(0));
  return Status{};
}

Status read_data(const FaultReader& reader, FaultSpec& spec) {
  bool scribble = false;
  FAULTLINE_TRY(scribble, reader.flag("scribble"));
  std::string data;
  FAULTLINE_TRY(data, reader.choice("data", {"scribble", "suppress"}, scribble ? "scribble" : ""));
  spec.data = data == "scribble"   ? DataAction::kScribble
              : data == "suppress" ? DataAction::kSuppress
                                   : DataAction::kKeep;
  FAULTLINE_TRY(spec.qp_error, reader.flag("qp_error"));
  if (spec.kind == FaultKind::kCorruptData && spec.data == DataAction::kKeep)
    return reader.bad("data",
                      "\"scribble\" (changed bytes) or \"suppress\" (the bytes never written): "
                      "corrupt_data needs one (required, missing)");
  return Status{};
}

Status read_status(const FaultReader& reader, FaultSpec& spec) {
  const json status = reader.fault().value("status", json());
  const auto parsed =
      status.is_string() ? completion_status_from_string(status.get<std::string>()) : std::nullopt;
  if (status.is_null()) return reader.bad("status", "an error status (required, missing)");
  if (!parsed || *parsed == CompletionStatus::kSuccess) {
    std::vector<std::string> names;
    for (const auto& row : kCompletionStatusTable)
      if (row.status != CompletionStatus::kSuccess) names.emplace_back(row.name);
    return reader.bad("status",
                      "an error status name, one of " + join(names) + "; got " + shown(status));
  }
  spec.status = *parsed;
  std::optional<uint64_t> vendor_err;
  FAULTLINE_TRY(vendor_err, reader.count("vendor_err", UINT32_MAX));
  spec.vendor_err = static_cast<uint32_t>(vendor_err.value_or(0));
  return read_data(reader, spec);
}

Result<int> read_errno(const FaultReader& reader, bool required) {
  std::optional<uint64_t> error_number;
  FAULTLINE_TRY(error_number, reader.count("errno", 4095));
  if (error_number == uint64_t{0} || (required && !error_number))
    return reader.bad("errno", "an errno from 1 to 4095");
  return static_cast<int>(error_number.value_or(0));
}

// One cap per limit named in the fault.
Status read_caps(const FaultReader& reader, LimitCaps& caps) {
  bool any =
      reader.has("profile") || reader.has("refuse_qp_types") || reader.has("refuse_operations");
#define FAULTLINE_READ_CAP(name, maximum_type)                                           \
  {                                                                                      \
    std::optional<uint64_t> value;                                                       \
    FAULTLINE_TRY(value, reader.count(#name, std::numeric_limits<maximum_type>::max())); \
    if (value) caps.name = static_cast<maximum_type>(*value);                            \
    any = any || value.has_value();                                                      \
  }
#define FAULTLINE_READ_DEVICE_CAP(name, type, interposer) \
  FAULTLINE_READ_CAP(name, limit_value_t<type>)
#define FAULTLINE_READ_CREATE_CAP(name, type) FAULTLINE_READ_CAP(name, type)
  FAULTLINE_DEVICE_LIMITS(FAULTLINE_READ_DEVICE_CAP)
  FAULTLINE_CREATE_LIMITS(FAULTLINE_READ_CREATE_CAP)
  FAULTLINE_READ_CAP(vendor_id, uint32_t)
  FAULTLINE_READ_CAP(vendor_part_id, uint32_t)
#undef FAULTLINE_READ_DEVICE_CAP
#undef FAULTLINE_READ_CREATE_CAP
#undef FAULTLINE_READ_CAP
  if (caps.atomic_cap > 2U)
    return reader.bad("atomic_cap", "an integer from 0 to 2 (enum ibv_atomic_cap)");
  if (!any)
    return reader.bad("max_qp_wr", "at least one cap: " + join(limit_names(kAll)) +
                                       " (or vendor_id, vendor_part_id, refuse_qp_types, "
                                       "refuse_operations)");
  return Status{};
}

// `{"names": [...], "errno": N}`: what the target has none of, each name one of `known`; the
// errno defaults to the fault's.
Status read_refused(const FaultReader& reader, const char* key,
                    std::span<const std::string_view> known, Refused& refused) {
  if (!reader.has(key)) return Status{};
  std::vector<std::string> allowed(known.begin(), known.end());
  const json& value = reader.fault().at(key);
  const std::string expected =
      "{\"names\": [one or more of " + join(allowed) + "], \"errno\": 1 to 4095 (optional)}";
  if (!value.is_object() || !value.contains("names") || !value.at("names").is_array() ||
      value.at("names").empty())
    return reader.bad(key, expected);
  for (const auto& [field, item] : value.items())
    if (field != "names" && field != "errno") return reader.bad(key, expected);
  for (const json& name : value.at("names")) {
    if (!name.is_string() ||
        std::find(allowed.begin(), allowed.end(), name.get<std::string>()) == allowed.end())
      return reader.bad(key, expected + "; got " + shown(name));
    refused.names.push_back(name.get<std::string>());
  }
  if (value.contains("errno")) {
    const FaultReader errno_reader(value, reader.where() + "/" + key);
    FAULTLINE_TRY(refused.error_number, read_errno(errno_reader, true));
  }
  return Status{};
}

Status read_limits(const FaultReader& reader, FaultSpec& spec) {
  FAULTLINE_RETURN_IF_ERROR(read_caps(reader, spec.caps));
  FAULTLINE_TRY(spec.caps.refusal_errno, read_errno(reader, false));
  if (spec.caps.refusal_errno == 0) spec.caps.refusal_errno = 22;  // EINVAL
  std::string inline_mode;
  FAULTLINE_TRY(inline_mode, reader.choice("inline", {"refuse_create", "clamp"}, "refuse_create"));
  spec.caps.clamp_inline = inline_mode == "clamp";
  spec.caps.qp_types.error_number = spec.caps.refusal_errno;
  spec.caps.operations.error_number = spec.caps.refusal_errno;
  FAULTLINE_RETURN_IF_ERROR(
      read_refused(reader, "refuse_qp_types", kQpTypeNames, spec.caps.qp_types));
  FAULTLINE_RETURN_IF_ERROR(
      read_refused(reader, "refuse_operations", kOperationNames, spec.caps.operations));
  std::string profile;
  FAULTLINE_TRY(profile, reader.text("profile"));
  spec.caps.source = profile.empty() ? "the scenario's limits fault" : "device profile " + profile;
  return Status{};
}

Status read_protocol(const FaultReader& reader, FaultSpec& spec) {
  FAULTLINE_TRY(
      spec.message,
      reader.choice("message", {"PushRequest", "PullRequest", "PullResponse", "PushResponse"}, ""));
  if (spec.message.empty()) return reader.bad("message", "the kv message type it mutates");
  if (spec.kind == FaultKind::kDropSegment) {
    FAULTLINE_TRY(spec.target, reader.choice("segment", {"keys", "vals", "lens"}, ""));
    if (spec.target.empty()) return reader.bad("segment", "keys, vals or lens");
  } else if (spec.kind == FaultKind::kCorruptHeader) {
    FAULTLINE_TRY(spec.target, reader.choice("field", {"magic", "segment_count"}, ""));
    if (spec.target.empty()) return reader.bad("field", "magic or segment_count");
  }
  return Status{};
}

// A field's place in a message: `offset` and `width` (1, 2, 4 or 8 bytes), both required.
Status read_field_location(const FaultReader& reader, FieldRewrite& field) {
  std::optional<uint64_t> offset;
  std::optional<uint64_t> width;
  FAULTLINE_TRY(offset, reader.count("offset", UINT32_MAX));
  FAULTLINE_TRY(width, reader.count("width", 8));
  if (!offset) return reader.bad("offset", "the field's byte offset in the message (required)");
  if (!width || (*width != 1 && *width != 2 && *width != 4 && *width != 8))
    return reader.bad("width", "the field's width in bytes: 1, 2, 4 or 8");
  field.offset = *offset;
  field.width = static_cast<uint32_t>(*width);
  return Status{};
}

// rewrite_field: the field (offset, width), what it becomes (value or minus_one), and which
// messages (equals, length).
Status read_field_rewrite(const FaultReader& reader, FaultSpec& spec) {
  FieldRewrite& field = spec.field;
  FAULTLINE_RETURN_IF_ERROR(read_field_location(reader, field));
  FAULTLINE_TRY(field.value, reader.count("value", field.maximum()));
  FAULTLINE_TRY(field.minus_one, reader.flag("minus_one"));
  if (field.value.has_value() == field.minus_one)
    return reader.bad("value", "exactly one of value (what the field becomes) or minus_one: true");
  FAULTLINE_TRY(field.equals, reader.count("equals", field.maximum()));
  FAULTLINE_TRY(field.length, reader.count("length", UINT32_MAX));
  if (field.length && *field.length < field.offset + field.width)
    return reader.bad("length", "a message length that holds the field (at least offset + width, " +
                                    std::to_string(field.offset + field.width) + ")");
  return Status{};
}

// observe: `sites` (the call sites' map), and a field of every matching post to log (`offset`
// and `width`; `length` and `opcode` filter), as a protocol's header says it.
Status read_observe(const FaultReader& reader, FaultSpec& spec) {
  FAULTLINE_TRY(spec.map_sites, reader.flag("sites"));
  if (!reader.has("offset") && !reader.has("width") && !reader.has("length")) return Status{};
  FAULTLINE_RETURN_IF_ERROR(read_field_location(reader, spec.field));
  FAULTLINE_TRY(spec.field.length, reader.count("length", UINT32_MAX));
  return Status{};
}

Status read_action(const FaultReader& reader, FaultSpec& spec) {
  switch (spec.kind) {
    case FaultKind::kRewriteStatus: return read_status(reader, spec);
    case FaultKind::kCorruptData: return read_data(reader, spec);
    case FaultKind::kDelayCompletion: {
      std::optional<uint64_t> delay;
      FAULTLINE_TRY(delay, reader.count("delay_ms", 60000));
      if (delay.value_or(0) == 0) return reader.bad("delay_ms", "milliseconds from 1 to 60000");
      spec.delay = std::chrono::milliseconds(*delay);
      return Status{};
    }
    case FaultKind::kReplayCompletion:
      FAULTLINE_TRY(spec.reuse_qp_number, reader.flag("reuse_qp_number"));
      return Status{};
    case FaultKind::kFailPost:
      FAULTLINE_TRY(spec.error_number, read_errno(reader, true));
      return Status{};
    case FaultKind::kInline: {
      std::string mode;
      FAULTLINE_TRY(mode, reader.choice("mode", {"off", "force", "above_limit"}, ""));
      if (mode.empty()) return reader.bad("mode", "off, force or above_limit");
      spec.inline_mode = mode == "off"     ? InlineMode::kOff
                         : mode == "force" ? InlineMode::kForce
                                           : InlineMode::kAboveLimit;
      return Status{};
    }
    case FaultKind::kLimits: return read_limits(reader, spec);
    case FaultKind::kSegmentCount: return read_segment_count(reader, spec);
    case FaultKind::kDropSegment:
    case FaultKind::kAddSegment:
    case FaultKind::kReorderSegments:
    case FaultKind::kCorruptHeader: return read_protocol(reader, spec);
    case FaultKind::kRewriteField: return read_field_rewrite(reader, spec);
    case FaultKind::kObserve: return read_observe(reader, spec);
    case FaultKind::kDropCompletion:
    case FaultKind::kDuplicateCompletion: return Status{};
  }
  return Status{};
}

}  // namespace

bool FiringRule::fires(uint64_t match, std::mt19937_64& random) const {
  if (nth != 0) return match == nth;
  if (every != 0) return match % every == 0;
  return std::uniform_real_distribution<double>(0.0, 1.0)(random) < probability;
}

Result<FaultSpec> parse_fault(const json& fault, unsigned appliers, const std::string& where) {
  FaultReader reader(fault, where);
  if (!fault.is_object()) return reader.bad("", "a fault object {\"kind\": ...}");
  FaultSpec spec;
  FAULTLINE_TRY(spec.kind, read_kind(reader, appliers));
  FAULTLINE_RETURN_IF_ERROR(check_keys(reader, spec.info(), appliers));
  FAULTLINE_RETURN_IF_ERROR(read_action(reader, spec));
  if (spec.info().firing) FAULTLINE_RETURN_IF_ERROR(read_firing(reader, spec));
  FAULTLINE_RETURN_IF_ERROR(read_filters(reader, spec));
  return spec;
}

Result<FaultSet> parse_fault_set(const json& plan, unsigned appliers, const std::string& origin) {
  if (!plan.is_object() || !plan.contains("faults") || !plan.at("faults").is_array())
    return Error{ErrorCode::kInvalidArgument, origin + ": expected {\"faults\": [...]} at the top"};
  for (const auto& [key, value] : plan.items()) {
    if (key != "faults" && key != "standing" && key != "seed")
      return Error{ErrorCode::kInvalidArgument,
                   origin + ": /" + key +
                       ": expected a key of a plan (faults, standing, seed); \"" + key +
                       "\" is none"};
  }
  if (plan.contains("standing") && !plan.at("standing").is_array())
    return Error{ErrorCode::kInvalidArgument,
                 origin + ": /standing: expected an array of faults (the conditions of the run)"};
  FaultSet parsed;
  if (plan.contains("seed")) {
    if (!plan.at("seed").is_number_unsigned())
      return Error{ErrorCode::kInvalidArgument,
                   origin + ": /seed: expected an integer from 0 to 2^64-1"};
    parsed.seed = plan.at("seed").get<uint64_t>();
  }
  for (const char* list : {"faults", "standing"}) {
    const json& faults = plan.value(list, json::array());
    for (size_t i = 0; i < faults.size(); ++i) {
      auto spec = parse_fault(faults[i], appliers, origin + ": /" + list + "/" + std::to_string(i));
      if (!spec.ok()) return std::move(spec).take_error();
      parsed.faults.push_back(std::move(spec).value());
    }
  }
  return parsed;
}

}  // namespace faultline::transports::fault
