#include "verbs_inline.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "event_log.hpp"
#include "process_plan.hpp"
#include "verbs_faults.hpp"

namespace faultline::transports::interpose {

namespace {

using fault::InlineMode;

// Room enough for the small sends programs post (a pingpong's 64 bytes, a header), within
// what RoCE NICs grant (hns 32 is the exception: its create is refused above, and the room
// asked then is the program's own).
constexpr uint32_t kForcedInlineRoom = 256;

struct Registration {
  uint64_t address = 0;
  uint64_t length = 0;
};

// A QP's inline room: what the program asked, what the device granted (more under `force`),
// and whether a send of the program's own has gone inline in the room it did not ask for.
struct Room {
  uint32_t asked = 0;
  uint32_t granted = 0;
  bool raised_room_used = false;
};

std::mutex rooms_mutex;
std::map<const ibv_qp*, Room> rooms;
std::mutex registrations_mutex;
std::multimap<uint32_t, Registration> registrations;  // by lkey

bool inline_capable(ibv_wr_opcode opcode) {
  return opcode == IBV_WR_SEND || opcode == IBV_WR_SEND_WITH_IMM || opcode == IBV_WR_RDMA_WRITE ||
         opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

uint32_t room_of(const ibv_qp* qp) {
  std::lock_guard lock(rooms_mutex);
  auto found = rooms.find(qp);
  return found == rooms.end() ? 0 : found->second.granted;
}

// A send the program itself posts inline into room `force` gave its QP beyond what it asked
// (ibv_rc_pingpong sizes its sends from its QP's room): the raise reached it. Logged once a
// QP (`inline_room_used`), so a verdict can tell a raise that changed what was posted from
// one that changed nothing (ib_write_bw's 64 KiB writes never fit).
void note_raised_room_used(const ibv_qp* qp, uint64_t length) {
  Room used;
  {
    std::lock_guard lock(rooms_mutex);
    auto found = rooms.find(qp);
    if (found == rooms.end() || found->second.raised_room_used || length <= found->second.asked ||
        length > found->second.granted)
      return;
    found->second.raised_room_used = true;
    used = found->second;
  }
  log_event({{"event", "inline_room_used"},
             {"layer", "verbs"},
             {"qp_num", qp->qp_num},
             {"bytes", length},
             {"inline_room", {used.asked, used.granted}}});
}

// What an inline fault of `mode` does, as a device would: the model a verdict names.
const char* model_of(InlineMode mode) {
  switch (mode) {
    case InlineMode::kOff:
      return "a device that executes no inline send: IBV_SEND_INLINE cleared, the bytes read "
             "through their lkeys";
    case InlineMode::kForce: return "sent inline, within the room the QP was granted";
    case InlineMode::kAboveLimit: return "posted inline above the room the QP was granted";
    case InlineMode::kNone: break;
  }
  return "";
}

bool holds(const Registration& region, uint64_t address, uint64_t length) {
  return address >= region.address && address + length <= region.address + region.length;
}

bool registered(const ibv_sge& sge) {
  std::lock_guard lock(registrations_mutex);
  auto [first, last] = registrations.equal_range(sge.lkey);
  return std::any_of(first, last,
                     [&](const auto& entry) { return holds(entry.second, sge.addr, sge.length); });
}

bool all_registered(const ibv_send_wr& wr) {
  for (int i = 0; i < wr.num_sge; ++i)
    if (!registered(wr.sg_list[i])) return false;
  return true;
}

// Whether `mode` changes a send's inline flag, on a QP with `room` bytes of inline room.
bool changes(InlineMode mode, bool is_inline, uint64_t length, uint32_t room) {
  switch (mode) {
    case InlineMode::kOff: return is_inline;
    case InlineMode::kForce: return !is_inline && room > 0 && length <= room;
    case InlineMode::kAboveLimit: return !is_inline && length > room;
    case InlineMode::kNone: return false;
  }
  return false;
}

}  // namespace

uint32_t inline_room_to_ask(uint32_t asked) {
  const Plan& plan = Plan::get();
  if (!plan.has_inline_mode(InlineMode::kForce) || asked >= kForcedInlineRoom) return asked;
  const uint32_t cap = plan.caps().max_inline_data.value_or(kForcedInlineRoom);
  return std::max(asked, std::min(kForcedInlineRoom, cap));
}

void remember_inline_room(const ibv_qp* qp, const char* call, uint32_t asked, uint32_t granted,
                          bool raised) {
  Plan& plan = Plan::get();
  if (!plan.has(FaultKind::kInline)) return;
  {
    std::lock_guard lock(rooms_mutex);
    rooms[qp] = Room{asked, granted};
  }
  if (!raised) return;
  Event event;
  event.side = Side::kSend;
  event.qp_num = qp->qp_num;
  auto fired = plan.inline_fault(event, [](InlineMode mode) { return mode == InlineMode::kForce; });
  if (fired)
    log_fault(*fired, {{"call", call},
                       {"layer", "verbs"},
                       {"qp_num", qp->qp_num},
                       {"inline_room", {asked, granted}}});
}

void forget_inline_room(const ibv_qp* qp) {
  if (!Plan::get().has(FaultKind::kInline)) return;
  std::lock_guard lock(rooms_mutex);
  rooms.erase(qp);
}

void remember_registration(const ibv_mr* mr) {
  if (mr == nullptr || !Plan::get().has(FaultKind::kInline)) return;
  std::lock_guard lock(registrations_mutex);
  registrations.emplace(mr->lkey, Registration{reinterpret_cast<uint64_t>(mr->addr), mr->length});
}

void forget_registration(const ibv_mr* mr) {
  if (mr == nullptr || !Plan::get().has(FaultKind::kInline)) return;
  std::lock_guard lock(registrations_mutex);
  auto [first, last] = registrations.equal_range(mr->lkey);
  for (auto entry = first; entry != last; ++entry) {
    if (entry->second.address == reinterpret_cast<uint64_t>(mr->addr)) {
      registrations.erase(entry);
      return;
    }
  }
}

std::optional<FiredFault> inline_fault_for(const ibv_qp* qp, const Event& event, bool is_inline,
                                           uint64_t length, nlohmann::json& details) {
  Plan& plan = Plan::get();
  if (!plan.has(FaultKind::kInline)) return std::nullopt;
  const uint32_t room = room_of(qp);
  auto fired = plan.inline_fault(
      event, [&](InlineMode mode) { return changes(mode, is_inline, length, room); });
  if (fired) {
    details["layer"] = "verbs";
    details["qp_num"] = qp->qp_num;
    details["bytes"] = length;
    details["inline_room"] = room;
    details["inline"] = is_inline ? "cleared" : "set";
    details["model"] = model_of(fired->inline_mode);
  }
  return fired;
}

std::optional<uint32_t> registered_lkey(uint64_t address, uint64_t length) {
  std::lock_guard lock(registrations_mutex);
  for (const auto& [lkey, region] : registrations)
    if (holds(region, address, length)) return lkey;
  return std::nullopt;
}

void log_unregistered(const FiredFault& fired, nlohmann::json details) {
  details.erase("inline");
  details["errno"] = EINVAL;
  details["error"] = std::strerror(EINVAL);
  details["unregistered"] = true;
  details["hint"] =
      "its bytes are in no memory registration, so only an inline post can send them: a device "
      "that executes no inline send on a QP that was granted inline room refuses it. A real NIC "
      "with less inline room says so when the QP is created (cap.max_inline_data), and a "
      "program that checks what it was granted then registers its buffer: kind=limits,"
      "max_inline_data=0,inline=clamp is that NIC";
  log_fault(fired, std::move(details));
}

InlineChange::InlineChange(ibv_qp* qp, ibv_send_wr* chain) {
  if (!Plan::get().has(FaultKind::kInline)) return;
  for (ibv_send_wr* wr = chain; wr != nullptr; wr = wr->next) {
    if (!inline_capable(wr->opcode)) continue;
    nlohmann::json details = {{"call", "ibv_post_send"}, {"wr_id", wr->wr_id}};
    const bool is_inline = (wr->send_flags & IBV_SEND_INLINE) != 0;
    if (is_inline) note_raised_room_used(qp, sge_bytes(wr->sg_list, wr->num_sge));
    auto fired = inline_fault_for(qp, send_event(*wr, qp->qp_num), is_inline,
                                  sge_bytes(wr->sg_list, wr->num_sge), details);
    if (!fired) continue;
    if (is_inline && !all_registered(*wr)) {
      log_unregistered(*fired, std::move(details));
      unregistered_ = wr;
      return;
    }
    original_flags_.emplace_back(wr, wr->send_flags);
    wr->send_flags ^= IBV_SEND_INLINE;
    log_fault(*fired, std::move(details));
  }
}

InlineChange::~InlineChange() {
  for (auto& [wr, flags] : original_flags_) wr->send_flags = flags;
}

}  // namespace faultline::transports::interpose
