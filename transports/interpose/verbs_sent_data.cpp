#include "verbs_sent_data.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "posted_buffers.hpp"
#include "process_plan.hpp"
#include "verbs_context.hpp"
#include "verbs_faults.hpp"
#include "verbs_real.hpp"

namespace faultline::transports::interpose {

namespace {

std::mutex copies_mutex;
using QpKey = std::pair<const ibv_context*, uint32_t>;
std::map<QpKey, std::deque<SentCopy>> copies_by_qp;
std::atomic<size_t> copies_held{0};  // polls look here before taking the lock

bool changes_data(const FaultSpec& fault) { return fault.info().effect.change_data; }

// Whether a request carries bytes of its own to a peer (an RDMA read brings bytes back: its
// data faults apply at its completion, to the bytes it delivered).
bool carries_bytes(std::optional<transports::Opcode> opcode) {
  using transports::Opcode;
  return opcode == Opcode::kSend || opcode == Opcode::kSendWithImm ||
         opcode == Opcode::kRdmaWrite || opcode == Opcode::kRdmaWriteWithImm;
}

// The bytes of `sges` gathered into one copy.
std::unique_ptr<std::byte[]> gathered(std::span<const ibv_sge> sges, uint64_t length) {
  auto bytes = std::make_unique<std::byte[]>(std::max<uint64_t>(length, 1));
  uint64_t offset = 0;
  for (const ibv_sge& sge : sges) {
    // The verbs ABI carries a buffer's address as an integer.
    std::memcpy(bytes.get() + offset,
                reinterpret_cast<const void*>(sge.addr),  // NOLINT(performance-no-int-to-ptr)
                sge.length);
    offset += sge.length;
  }
  return bytes;
}

ibv_mr* register_copy(ibv_pd* pd, std::byte* bytes, uint64_t length) {
  // The exported function, not the macro of verbs.h; the program's registrations stay its own.
  static auto* real = real_verbs<ibv_mr*(ibv_pd*, void*, size_t, int)>("ibv_reg_mr");
  return real != nullptr ? real(pd, bytes, std::max<uint64_t>(length, 1), IBV_ACCESS_LOCAL_WRITE)
                         : nullptr;
}

// One SGE per SGE of the program's, at the same offsets into `copy`.
std::vector<ibv_sge> sges_into(std::span<const ibv_sge> sges, const SentCopy& copy) {
  std::vector<ibv_sge> into;
  uint64_t offset = 0;
  for (const ibv_sge& sge : sges) {
    into.push_back(
        ibv_sge{reinterpret_cast<uintptr_t>(copy.bytes.get() + offset), sge.length, copy.mr->lkey});
    offset += sge.length;
  }
  return into;
}

}  // namespace

void SentCopy::Deregistration::operator()(ibv_mr* mr) const {
  static auto* real = real_verbs<decltype(ibv_dereg_mr)>("ibv_dereg_mr");
  if (real != nullptr && mr != nullptr) real(mr);
}

std::optional<std::vector<ibv_sge>> changed_sent_data(ibv_qp* qp, const Event& event,
                                                      uint64_t wr_id, std::span<const ibv_sge> sges,
                                                      const char* call) {
  if (!carries_bytes(event.opcode)) return std::nullopt;
  Plan& plan = Plan::get();
  const uint64_t length = sge_bytes(sges.data(), static_cast<int>(sges.size()));
  std::optional<FiredFault> fired;
  if (plan.has_data_rules()) fired = plan.completion_fault(event, &changes_data);
  if (!fired)
    fired = plan.field_fault(event, length, [&](const fault::FieldRewrite& field) {
      return fault::read_field(field, sges, sge_address, sge_length);
    });
  if (!fired) return std::nullopt;
  nlohmann::json details = {{"call", call},
                            {"layer", "verbs"},
                            {"device", original_ops(qp->context).device},
                            {"qp_num", qp->qp_num},
                            {"wr_id", wr_id}};
  if (fired->data == DataAction::kSuppress) {
    details["bytes_changed"] = length;
    details["posted_bytes"] = 0;
    log_fault(*fired, std::move(details));
    return std::vector<ibv_sge>{};
  }
  SentCopy copy{wr_id, gathered(sges, length), nullptr};
  copy.mr.reset(register_copy(qp->pd, copy.bytes.get(), length));
  if (!copy.mr) {
    const int error = errno;
    details["bytes_changed"] = 0;
    details["error"] = std::string("ibv_reg_mr of the changed copy: ") + std::strerror(error);
    log_fault(*fired, std::move(details));
    return std::nullopt;
  }
  if (fired->kind == FaultKind::kRewriteField) {
    const ibv_sge whole{reinterpret_cast<uintptr_t>(copy.bytes.get()),
                        static_cast<uint32_t>(length), 0};
    details.update(field_details(
        fired->field,
        fault::rewrite_field(fired->field, std::span(&whole, 1), sge_address, sge_length)));
  } else {
    scribble(copy.bytes.get(), length);
    details["bytes_changed"] = length;
  }
  log_fault(*fired, std::move(details));
  std::vector<ibv_sge> into = sges_into(sges, copy);
  std::lock_guard lock(copies_mutex);
  copies_by_qp[QpKey{qp->context, qp->qp_num}].push_back(std::move(copy));
  copies_held.fetch_add(1, std::memory_order_relaxed);
  return into;
}

SentDataChange::SentDataChange(ibv_qp* qp, ibv_send_wr* chain) {
  if (!Plan::get().has_data_rules() && !Plan::get().has(FaultKind::kRewriteField)) return;
  for (ibv_send_wr* wr = chain; wr != nullptr; wr = wr->next) {
    auto changed = changed_sent_data(
        qp, send_event(*wr, qp->qp_num), wr->wr_id,
        std::span<const ibv_sge>(wr->sg_list, static_cast<size_t>(std::max(wr->num_sge, 0))),
        "ibv_post_send");
    if (!changed) continue;
    original_.emplace_back(wr, wr->sg_list, wr->num_sge);
    lists_.push_back(std::move(*changed));
    wr->sg_list = lists_.back().data();
    wr->num_sge = static_cast<int>(lists_.back().size());
  }
}

SentDataChange::~SentDataChange() {
  for (auto& [wr, list, count] : original_) {
    wr->sg_list = list;
    wr->num_sge = count;
  }
}

void release_sent_copies(const ibv_context* context, uint32_t qp_num, uint64_t wr_id) {
  if (copies_held.load(std::memory_order_relaxed) == 0) return;
  std::deque<SentCopy> released;
  {
    std::lock_guard lock(copies_mutex);
    auto found = copies_by_qp.find(QpKey{context, qp_num});
    if (found == copies_by_qp.end()) return;
    auto& held = found->second;
    auto completed = std::find_if(held.begin(), held.end(),
                                  [&](const SentCopy& copy) { return copy.wr_id == wr_id; });
    if (completed == held.end()) return;
    std::move(held.begin(), completed + 1, std::back_inserter(released));
    held.erase(held.begin(), completed + 1);
    if (held.empty()) copies_by_qp.erase(found);
    copies_held.fetch_sub(released.size(), std::memory_order_relaxed);
  }
}

std::deque<SentCopy> take_sent_copies(const ibv_qp* qp) {
  if (copies_held.load(std::memory_order_relaxed) == 0) return {};
  std::lock_guard lock(copies_mutex);
  auto found = copies_by_qp.find(QpKey{qp->context, qp->qp_num});
  if (found == copies_by_qp.end()) return {};
  std::deque<SentCopy> taken = std::move(found->second);
  copies_by_qp.erase(found);
  copies_held.fetch_sub(taken.size(), std::memory_order_relaxed);
  return taken;
}

}  // namespace faultline::transports::interpose
