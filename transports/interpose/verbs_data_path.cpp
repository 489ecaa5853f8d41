#include "verbs_data_path.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <span>

#include "call_sites.hpp"
#include "event_log.hpp"
#include "progress.hpp"
#include "verbs_context.hpp"
#include "verbs_faults.hpp"
#include "verbs_inline.hpp"
#include "verbs_limits.hpp"
#include "verbs_real.hpp"
#include "verbs_segments.hpp"
#include "verbs_sent_data.hpp"

namespace faultline::transports::interpose {

namespace {

// Duplicated completions that did not fit the program's array: handed out by its next poll.
std::mutex held_mutex;
std::map<ibv_cq*, std::deque<ibv_wc>> held;

int take_held(ibv_cq* cq, int num_entries, ibv_wc* wc) {
  std::lock_guard lock(held_mutex);
  auto found = held.find(cq);
  if (found == held.end()) return 0;
  int n = 0;
  for (; n < num_entries && !found->second.empty(); ++n) {
    wc[n] = found->second.front();
    found->second.pop_front();
  }
  if (found->second.empty()) held.erase(found);
  return n;
}

// Applies the rules to entry `i` of `count`; returns the new count (a drop removes the entry,
// a duplicate adds one after it, or holds it when the array is full).
int apply_to_entry(ibv_cq* cq, ibv_wc* wc, int i, int count, int num_entries) {
  ibv_wc& entry = wc[i];
  const bool success = entry.status == IBV_WC_SUCCESS;
  if (success && (entry.opcode & IBV_WC_RECV) == 0)
    release_sent_copies(cq->context, entry.qp_num, entry.wr_id);
  const Event event = completion_event(entry.opcode, entry.qp_num);
  if (success && Plan::get().maps_sites()) note_site(event, "ibv_poll_cq");
  auto rule = success ? Plan::get().completion_fault(event, completion_filter(entry.opcode, false))
                      : std::nullopt;
  if (!rule) {
    forget_delivery(cq->context, entry.qp_num, entry.wr_id, entry.opcode);
    return count;
  }
  auto details = apply_side_effects(*rule, cq->context, entry.qp_num, entry.wr_id, entry.opcode,
                                    entry.byte_len);
  details["call"] = "ibv_poll_cq";
  if (rule->info().effect.rewrite_status) {
    entry.status = static_cast<ibv_wc_status>(rule->status);
    entry.vendor_err = rule->vendor_err != 0 ? rule->vendor_err : kInjectedVendorErr;
  } else if (rule->info().effect.drop) {
    std::memmove(&wc[i], &wc[i + 1], sizeof(ibv_wc) * (count - i - 1));
    --count;
  } else if (rule->info().effect.duplicate) {
    if (count < num_entries) {
      std::memmove(&wc[i + 1], &wc[i], sizeof(ibv_wc) * (count - i));
      ++count;
    } else {
      std::lock_guard lock(held_mutex);
      held[cq].push_back(entry);
    }
  }
  log_fault(*rule, std::move(details));
  return count;
}

// Posts a chain up to the first work request `refusal` refuses (an errno, logged by it; 0
// posts it): those before it are posted, it and those after are not, as a provider does.
template <typename WorkRequest, typename PostFn, typename RefusalFn>
int post_until_refused(WorkRequest* wr, WorkRequest** bad_wr, PostFn post, RefusalFn refusal) {
  WorkRequest* previous = nullptr;
  for (WorkRequest* current = wr; current != nullptr; current = current->next) {
    const int refused = refusal(*current);
    if (refused == 0) {
      previous = current;
      continue;
    }
    if (previous != nullptr) {
      previous->next = nullptr;
      const int posted = post(wr, bad_wr);
      previous->next = current;
      if (posted != 0) return posted;
    }
    *bad_wr = current;
    return refused;
  }
  return post(wr, bad_wr);
}

// The errno of the fail_post rule that fires for a work request (logged), or 0.
template <typename WorkRequest>
int fail_post_refusal(const WorkRequest& wr, const Event& event, const char* call) {
  auto rule = Plan::get().post_fault(event);
  if (!rule) return 0;
  log_fault(*rule, {{"call", call},
                    {"layer", "verbs"},
                    {"wr_id", wr.wr_id},
                    {"errno", rule->error_number},
                    {"error", std::strerror(rule->error_number)}});
  return rule->error_number;
}

// A receive post, to a QP or an SRQ: its buffers recorded for the data rules (before the post:
// another thread may poll its completion at once), then the fail_post rules.
template <typename ProviderPost>
int post_receives(ibv_recv_wr* wr, ibv_recv_wr** bad_wr, uint64_t queue, const ibv_qp* qp,
                  ProviderPost provider_post, const char* call) {
  if (Plan::get().maps_sites()) {
    Event event;
    event.side = Side::kRecv;
    for (const ibv_recv_wr* one = wr; one != nullptr; one = one->next)
      note_site(event, call, false, one->num_sge);
  }
  const SegmentChange<ibv_recv_wr> segment_change(wr, qp, call);
  auto post = [&](ibv_recv_wr* first, ibv_recv_wr** bad) {
    if (Plan::get().has_data_rules()) record_receives(queue, first);
    const int posted = provider_post(first, bad);
    if (posted == 0) note_progress();
    return posted;
  };
  if (!Plan::get().has(FaultKind::kFailPost)) return post(wr, bad_wr);
  Event event;
  event.side = Side::kRecv;
  if (qp != nullptr) event.qp_num = qp->qp_num;
  return post_until_refused(wr, bad_wr, post, [&](const ibv_recv_wr& one) {
    return fail_post_refusal(one, event, call);
  });
}

// A post the device refused, logged (`post_refused`) with what the device had granted the QP
// where that explains it: an inline send above its inline room is "inline refused by the
// device" (the seed report's first symptom), not a fault of faultline's.
void log_refused_send(ibv_qp* qp, const ibv_send_wr* refused, int error) {
  if (refused == nullptr) return;
  const uint64_t bytes = sge_bytes(refused->sg_list, refused->num_sge);
  const Event event = send_event(*refused, qp->qp_num);
  nlohmann::json details = {{"event", "post_refused"},
                            {"call", "ibv_post_send"},
                            {"device", original_ops(qp->context).device},
                            {"qp_num", qp->qp_num},
                            {"errno", error},
                            {"error", std::strerror(error)},
                            {"bytes", bytes},
                            {"inline", (refused->send_flags & IBV_SEND_INLINE) != 0}};
  if (event.opcode) details["opcode"] = transports::to_string(*event.opcode);
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  static auto* query = real_verbs<decltype(ibv_query_qp)>("ibv_query_qp");
  if (details["inline"] == true && query != nullptr && query(qp, &attr, IBV_QP_CAP, &init) == 0)
    details["inline_room"] = init.cap.max_inline_data;
  log_event(std::move(details));
}

// An `observe` field of each send and write about to be posted, as it goes out (after the
// plan's changes), logged as a `field` event.
void log_posted_fields(ibv_qp* qp, const ibv_send_wr* chain) {
  for (const ibv_send_wr* wr = chain; wr != nullptr; wr = wr->next) {
    const std::span<const ibv_sge> sges(wr->sg_list, static_cast<size_t>(std::max(wr->num_sge, 0)));
    Plan::get().log_observed_fields(
        send_event(*wr, qp->qp_num), sge_bytes(wr->sg_list, wr->num_sge),
        [&](const fault::FieldRewrite& field) {
          return fault::read_field(field, sges, sge_address, sge_length);
        },
        {{"call", "ibv_post_send"}, {"qp_num", qp->qp_num}, {"wr_id", wr->wr_id}});
  }
}

int poll_cq_applying_faults(ibv_cq* cq, int num_entries, ibv_wc* wc) {
  const ContextOps& ops = original_ops(cq->context);
  if (num_entries <= 0) return ops.poll_cq(cq, num_entries, wc);
  const int from_held = take_held(cq, num_entries, wc);
  if (from_held > 0) return from_held;
  // A dropped completion is lost, never the ones behind it: when one is dropped from a batch
  // that filled the room asked for, the provider is polled again for the room it left (a
  // program polling one entry at a time, then re-arming, still gets the next completion).
  int count = 0;
  for (;;) {
    const int room = num_entries - count;
    const int polled = ops.poll_cq(cq, room, wc + count);
    if (polled < 0) return count > 0 ? count : polled;
    int batch_end = count + polled;
    bool dropped = false;
    for (int i = count; i < batch_end; ++i) {
      const int before = batch_end;
      batch_end = apply_to_entry(cq, wc, i, batch_end, num_entries);
      if (batch_end < before) {
        dropped = true;
        --i;  // the next entry moved into i
      } else if (batch_end > before) {
        ++i;  // duplicated: skip the copy
      }
    }
    count = batch_end;
    // Polled fewer than asked: the CQ is empty. Nothing dropped: nothing to make up for.
    if (polled < room || !dropped || count >= num_entries) return count;
  }
}

// The provider's post of `wr` (or of the chain from it), counted as progress when it took it.
int provider_post_send(const ContextOps& ops, ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  const int posted = ops.post_send(qp, wr, bad_wr);
  if (posted == 0) note_progress();
  return posted;
}

}  // namespace

int poll_cq_with_faults(ibv_cq* cq, int num_entries, ibv_wc* wc) {
  const int polled = poll_cq_applying_faults(cq, num_entries, wc);
  if (polled > 0) note_progress();
  return polled;
}

int post_send_with_faults(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  const ContextOps& ops = original_ops(qp->context);
  if (Plan::get().maps_sites())
    for (const ibv_send_wr* one = wr; one != nullptr; one = one->next)
      note_site(send_event(*one, qp->qp_num), "ibv_post_send",
                (one->send_flags & IBV_SEND_INLINE) != 0, one->num_sge);
  const SegmentChange<ibv_send_wr> segment_change(wr, qp, "ibv_post_send");
  const InlineChange inline_change(qp, wr);
  if (int refused = check_send_post(qp, wr, bad_wr); refused != 0) return refused;
  const SentDataChange sent_data(qp, wr);
  if (Plan::get().has_data_rules()) record_reads(qp, wr);
  if (Plan::get().observes_fields()) log_posted_fields(qp, wr);
  if (!Plan::get().has(FaultKind::kFailPost) && inline_change.unregistered() == nullptr) {
    const int posted = provider_post_send(ops, qp, wr, bad_wr);
    if (posted != 0) log_refused_send(qp, *bad_wr, posted);
    return posted;
  }
  return post_until_refused(
      wr, bad_wr,
      [&](ibv_send_wr* first, ibv_send_wr** bad) {
        return provider_post_send(ops, qp, first, bad);
      },
      [&](const ibv_send_wr& one) {
        if (&one == inline_change.unregistered()) return EINVAL;
        return fail_post_refusal(one, send_event(one, qp->qp_num), "ibv_post_send");
      });
}

int post_recv_with_faults(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  const ContextOps& ops = original_ops(qp->context);
  return post_receives(
      wr, bad_wr, receive_queue_of_qp(qp), qp,
      [&](ibv_recv_wr* first, ibv_recv_wr** bad) { return ops.post_recv(qp, first, bad); },
      "ibv_post_recv");
}

int post_srq_recv_with_faults(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  const ContextOps& ops = original_ops(srq->context);
  return post_receives(
      wr, bad_wr, receive_queue_of_srq(srq), nullptr,
      [&](ibv_recv_wr* first, ibv_recv_wr** bad) { return ops.post_srq_recv(srq, first, bad); },
      "ibv_post_srq_recv");
}

}  // namespace faultline::transports::interpose
