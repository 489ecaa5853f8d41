#include "ofi_endpoint.hpp"

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "call_sites.hpp"
#include "event_log.hpp"
#include "faultline/transports/fault/segment_split.hpp"
#include "ofi_inline.hpp"
#include "ofi_provider_call.hpp"
#include "post_attempt.hpp"
#include "posted_buffers.hpp"
#include "posted_operations.hpp"
#include "process_plan.hpp"
#include "progress.hpp"

namespace faultline::transports::interpose {

namespace {

// One wrapped endpoint: `msg` first, so the endpoint's msg pointer is this object's address.
struct WrappedEp {
  fi_ops_msg msg;
  fi_ops_tagged tagged;
  fi_ops fid_ops;
  const fi_ops_msg* inner_msg;
  const fi_ops_tagged* inner_tagged;
  const fi_ops* inner_fid;
  const char* layer;
  bool programs_own;
  bool wraps_posts;  // the plan has post faults, data rules or completion filters to record
  InlineEndpoint inline_endpoint;
};

WrappedEp& from_msg(fid_ep* ep) { return *reinterpret_cast<WrappedEp*>(ep->msg); }
WrappedEp& from_fid(fid* fid) {
  return *reinterpret_cast<WrappedEp*>(reinterpret_cast<char*>(fid->ops) -
                                       offsetof(WrappedEp, fid_ops));
}
WrappedEp& from_tagged(fid_ep* ep) {
  return *reinterpret_cast<WrappedEp*>(reinterpret_cast<char*>(ep->tagged) -
                                       offsetof(WrappedEp, tagged));
}

Event post_event(const WrappedEp& ep, Side side) {
  Event event;
  event.side = side;
  event.layer = ep.layer;
  event.outermost = ep.programs_own;
  return event;
}

// One post's iovs and their descriptors with a segment_count fault applied: the last iov left
// out (`fewer`), or the same bytes in more iovs (`split`, each with its iov's descriptor).
// Unchanged (the program's own arrays) when no fault fires.
class IovChange {
 public:
  IovChange(const WrappedEp& ep, Side side, const char* call, const iovec* iov, void** desc,
            size_t count)
      : iov_(iov), desc_(desc), count_(count) {
    if (side == Side::kSend) rewrite_field(ep, call, post_event(ep, side));
    auto fired = Plan::get().post_fault(post_event(ep, side), FaultKind::kSegmentCount);
    if (!fired) return;
    changed_ = true;
    size_t bytes = 0;
    for (size_t i = 0; i < count; ++i) bytes += iov[i].iov_len;
    if (fired->segment_mode == SegmentMode::kFewer) {
      count_ = count > 0 ? count - 1 : 0;
    } else {
      split(iov, desc, count, fired->split_into);
    }
    size_t posted = 0;
    for (size_t i = 0; i < count_; ++i) posted += iov_[i].iov_len;
    log_fault(*fired, {{"call", call},
                       {"layer", ep.layer},
                       {"segments", {count, count_}},
                       {"bytes", {bytes, posted}}});
  }
  bool changed() const { return changed_; }
  bool changed_to_many() const { return count_ > 1; }
  /// `msg` (an fi_msg or fi_msg_tagged) with these iovs.
  template <typename Msg>
  Msg applied_to(const Msg& msg) const {
    Msg changed = msg;
    changed.msg_iov = iov_;
    changed.desc = desc_;
    changed.iov_count = count_;
    return changed;
  }
  const iovec* iov() const { return iov_; }
  void** desc() const { return desc_; }
  size_t count() const { return count_; }
  size_t length() const { return count_ == 0 ? 0 : iov_[0].iov_len; }

 private:
  // rewrite_field on a send: in the program's buffer, before it is posted (libfabric gives no
  // place for a changed copy that every provider takes: one with FI_MR_LOCAL needs it
  // registered), as the program would have written the field itself.
  void rewrite_field(const WrappedEp& ep, const char* call, const Event& event) const {
    const std::span<const iovec> pieces(iov_, count_);
    uint64_t length = 0;
    for (const iovec& piece : pieces) length += piece.iov_len;
    const auto address = [](const iovec& piece) { return static_cast<std::byte*>(piece.iov_base); };
    const auto bytes = [](const iovec& piece) { return piece.iov_len; };
    auto fired = Plan::get().field_fault(event, length, [&](const fault::FieldRewrite& field) {
      return fault::read_field(field, pieces, address, bytes);
    });
    if (!fired) return;
    nlohmann::json details = {{"call", call}, {"layer", ep.layer}, {"bytes", length}};
    const auto values = fault::rewrite_field(fired->field, pieces, address, bytes);
    details.update(field_details(fired->field, values));
    log_fault(*fired, std::move(details));
    // A post the provider refuses leaves the program's buffer as it wrote it: the retry is
    // the post the fault goes to.
    if (PostAttempt* attempt = PostAttempt::current(); attempt != nullptr && values)
      attempt->on_refused([field = fired->field, old = values->first, pieces, address, bytes] {
        fault::FieldRewrite restore = field;
        restore.value = old;
        restore.minus_one = false;
        fault::rewrite_field(restore, pieces, address, bytes);
      });
  }

  void split(const iovec* iov, void** desc, size_t count, size_t into) {
    struct Piece {
      iovec iov;
      void* desc;
    };
    std::vector<Piece> pieces;
    for (size_t i = 0; i < count; ++i)
      pieces.push_back({iov[i], desc != nullptr ? desc[i] : nullptr});
    pieces = fault::split_pieces(
        std::span<const Piece>(pieces), into, [](const Piece& p) { return p.iov.iov_len; },
        [](const Piece& p, size_t first) {
          return std::pair{
              Piece{{p.iov.iov_base, first}, p.desc},
              Piece{{static_cast<char*>(p.iov.iov_base) + first, p.iov.iov_len - first}, p.desc}};
        });
    for (const Piece& piece : pieces) {
      split_iov_.push_back(piece.iov);
      split_desc_.push_back(piece.desc);
    }
    iov_ = split_iov_.data();
    desc_ = desc != nullptr ? split_desc_.data() : nullptr;
    count_ = split_iov_.size();
  }

  const iovec* iov_;
  void** desc_;
  size_t count_;
  bool changed_ = false;
  std::vector<iovec> split_iov_;
  std::vector<void*> split_desc_;
};

// What a post of `call` completes as: a receive, a send (with data), or nothing (an inject).
std::optional<PostedOperations::Operation> operation_of(Side side, std::string_view call) {
  if (call.find("inject") != std::string_view::npos) return std::nullopt;
  if (side == Side::kRecv) return PostedOperations::Operation{side, transports::Opcode::kRecv};
  const bool data = call.find("senddata") != std::string_view::npos;
  return PostedOperations::Operation{
      side, data ? transports::Opcode::kSendWithImm : transports::Opcode::kSend};
}

// Runs one post; a fail_post rule that fires returns its errno
// (negative, libfabric's convention) and nothing is posted. Under completion faults that
// filter by side or opcode, what was posted on `context` is recorded for its completion.
template <typename Post>
ssize_t counted_post(const WrappedEp& ep, Side side, const char* call, void* context, Post post) {
  const uint64_t queue = receive_queue_of_layer(ep.layer);
  auto operation = PostedOperations::wanted() ? operation_of(side, call) : std::nullopt;
  // The event post faults see (no opcode: the call says it). Where its site is wanted for its
  // completion, the stack is walked once here and the map and the faults take it too.
  Event event = post_event(ep, side);
  if (operation && ep.programs_own) {
    operation->site = site_of(event);
    event.site = operation->site;
  }
  const auto recorded = [&] {
    if (operation)
      PostedOperations::get().record(queue, reinterpret_cast<uintptr_t>(context), *operation);
  };
  const auto unrecorded = [&] {
    if (operation)
      PostedOperations::get().take(queue, reinterpret_cast<uintptr_t>(context), operation->side);
  };
  // An inject posts inline.
  if (Plan::get().maps_sites())
    note_site(event, call, std::string_view(call).find("inject") != std::string_view::npos, 1);
  if (auto rule = Plan::get().post_fault(event)) {
    log_fault(*rule, {{"call", call},
                      {"layer", ep.layer},
                      {"errno", rule->error_number},
                      {"error", std::strerror(rule->error_number)}});
    return -rule->error_number;
  }
  recorded();  // before the post: another thread may read its completion at once
  const ProviderCall inside;
  const ssize_t posted = post();
  if (posted < 0) unrecorded();
  if (posted == 0) note_progress();
  // "Again": no post happened, and the retry is the occurrence (PostAttempt).
  if (posted == -FI_EAGAIN)
    if (PostAttempt* attempt = PostAttempt::current()) attempt->refused();
  return posted;
}

// The inline family, where the plan has it; nullopt: post the call as the program made it.
std::optional<ssize_t> inline_post(fid_ep* ep, const WrappedEp& w, const SendCall& call) {
  if (!Plan::get().has(FaultKind::kInline)) return std::nullopt;
  Event event = post_event(w, Side::kSend);
  event.opcode = call.data ? transports::Opcode::kSendWithImm : transports::Opcode::kSend;
  return post_with_inline_fault(ep, w.inline_endpoint, event, w.inner_msg, w.inner_tagged, call);
}

void record(const WrappedEp& ep, void* context, const iovec* iov, size_t count) {
  if (!Plan::get().has_data_rules()) return;
  std::vector<Segment> segments;
  for (size_t i = 0; i < count; ++i)
    segments.push_back({static_cast<std::byte*>(iov[i].iov_base), iov[i].iov_len});
  PostedBuffers::get().record(receive_queue_of_layer(ep.layer),
                              reinterpret_cast<uintptr_t>(context), std::move(segments),
                              Plan::get().has_suppress_rules());
}

ssize_t msg_recv(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t src, void* context) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_msg(ep);
  const iovec iov{buf, len};
  void* descs[1] = {desc};
  const IovChange change(w, Side::kRecv, "fi_recv", &iov, descs, 1);
  record(w, context, change.iov(), change.count());
  return counted_post(w, Side::kRecv, "fi_recv", context, [&] {
    if (change.changed_to_many())
      return w.inner_msg->recvv(ep, change.iov(), change.desc(), change.count(), src, context);
    return w.inner_msg->recv(ep, buf, change.length(), desc, src, context);
  });
}

ssize_t msg_recvv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t src,
                  void* context) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_msg(ep);
  const IovChange change(w, Side::kRecv, "fi_recvv", iov, desc, count);
  record(w, context, change.iov(), change.count());
  return counted_post(w, Side::kRecv, "fi_recvv", context, [&] {
    return w.inner_msg->recvv(ep, change.iov(), change.desc(), change.count(), src, context);
  });
}

ssize_t msg_recvmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_msg(ep);
  const IovChange change(w, Side::kRecv, "fi_recvmsg", msg->msg_iov, msg->desc, msg->iov_count);
  const fi_msg changed = change.applied_to(*msg);
  record(w, msg->context, change.iov(), change.count());
  return counted_post(w, Side::kRecv, "fi_recvmsg", msg->context,
                      [&] { return w.inner_msg->recvmsg(ep, &changed, flags); });
}

ssize_t msg_send(fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest,
                 void* context) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_msg(ep);
  const iovec iov{const_cast<void*>(buf), len};
  void* descs[1] = {desc};
  const IovChange change(w, Side::kSend, "fi_send", &iov, descs, 1);
  return counted_post(w, Side::kSend, "fi_send", context, [&] {
    if (auto posted = !change.changed() ? inline_post(ep, w,
                                                      {.call = "fi_send",
                                                       .buf = buf,
                                                       .len = len,
                                                       .desc = desc,
                                                       .dest = dest,
                                                       .context = context})
                                        : std::nullopt)
      return *posted;
    if (change.changed_to_many())
      return w.inner_msg->sendv(ep, change.iov(), change.desc(), change.count(), dest, context);
    return w.inner_msg->send(ep, buf, change.length(), desc, dest, context);
  });
}

ssize_t msg_sendv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t dest,
                  void* context) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_msg(ep);
  const IovChange change(w, Side::kSend, "fi_sendv", iov, desc, count);
  return counted_post(w, Side::kSend, "fi_sendv", context, [&] {
    return w.inner_msg->sendv(ep, change.iov(), change.desc(), change.count(), dest, context);
  });
}

ssize_t msg_sendmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_msg(ep);
  const IovChange change(w, Side::kSend, "fi_sendmsg", msg->msg_iov, msg->desc, msg->iov_count);
  const fi_msg changed = change.applied_to(*msg);
  return counted_post(w, Side::kSend, "fi_sendmsg", msg->context,
                      [&] { return w.inner_msg->sendmsg(ep, &changed, flags); });
}

ssize_t msg_inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_msg(ep);
  return counted_post(w, Side::kSend, "fi_inject", nullptr, [&] {
    if (auto posted = inline_post(
            ep, w, {.call = "fi_inject", .inject = true, .buf = buf, .len = len, .dest = dest}))
      return *posted;
    return w.inner_msg->inject(ep, buf, len, dest);
  });
}

ssize_t msg_senddata(fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data,
                     fi_addr_t dest, void* context) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_msg(ep);
  const iovec iov{const_cast<void*>(buf), len};
  void* descs[1] = {desc};
  const IovChange change(w, Side::kSend, "fi_senddata", &iov, descs, 1);
  return counted_post(w, Side::kSend, "fi_senddata", context, [&] {
    if (auto posted = !change.changed() ? inline_post(ep, w,
                                                      {.call = "fi_senddata",
                                                       .buf = buf,
                                                       .len = len,
                                                       .desc = desc,
                                                       .dest = dest,
                                                       .context = context,
                                                       .data = data})
                                        : std::nullopt)
      return *posted;
    if (change.changed_to_many()) {
      const fi_msg message =
          change.applied_to(fi_msg{.addr = dest, .context = context, .data = data});
      return w.inner_msg->sendmsg(ep, &message, FI_REMOTE_CQ_DATA | FI_COMPLETION);
    }
    return w.inner_msg->senddata(ep, buf, change.length(), desc, data, dest, context);
  });
}

ssize_t msg_injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_msg(ep);
  return counted_post(w, Side::kSend, "fi_injectdata", nullptr, [&] {
    if (auto posted = inline_post(ep, w,
                                  {.call = "fi_injectdata",
                                   .inject = true,
                                   .buf = buf,
                                   .len = len,
                                   .dest = dest,
                                   .data = data}))
      return *posted;
    return w.inner_msg->injectdata(ep, buf, len, data, dest);
  });
}

ssize_t tagged_recv(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t src, uint64_t tag,
                    uint64_t ignore, void* context) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_tagged(ep);
  const iovec iov{buf, len};
  void* descs[1] = {desc};
  const IovChange change(w, Side::kRecv, "fi_trecv", &iov, descs, 1);
  record(w, context, change.iov(), change.count());
  return counted_post(w, Side::kRecv, "fi_trecv", context, [&] {
    if (change.changed_to_many())
      return w.inner_tagged->recvv(ep, change.iov(), change.desc(), change.count(), src, tag,
                                   ignore, context);
    return w.inner_tagged->recv(ep, buf, change.length(), desc, src, tag, ignore, context);
  });
}

ssize_t tagged_recvv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t src,
                     uint64_t tag, uint64_t ignore, void* context) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_tagged(ep);
  const IovChange change(w, Side::kRecv, "fi_trecvv", iov, desc, count);
  record(w, context, change.iov(), change.count());
  return counted_post(w, Side::kRecv, "fi_trecvv", context, [&] {
    return w.inner_tagged->recvv(ep, change.iov(), change.desc(), change.count(), src, tag, ignore,
                                 context);
  });
}

ssize_t tagged_recvmsg(fid_ep* ep, const fi_msg_tagged* msg, uint64_t flags) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_tagged(ep);
  const IovChange change(w, Side::kRecv, "fi_trecvmsg", msg->msg_iov, msg->desc, msg->iov_count);
  const fi_msg_tagged changed = change.applied_to(*msg);
  record(w, msg->context, change.iov(), change.count());
  return counted_post(w, Side::kRecv, "fi_trecvmsg", msg->context,
                      [&] { return w.inner_tagged->recvmsg(ep, &changed, flags); });
}

ssize_t tagged_send(fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest,
                    uint64_t tag, void* context) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_tagged(ep);
  const iovec iov{const_cast<void*>(buf), len};
  void* descs[1] = {desc};
  const IovChange change(w, Side::kSend, "fi_tsend", &iov, descs, 1);
  return counted_post(w, Side::kSend, "fi_tsend", context, [&] {
    if (auto posted = !change.changed() ? inline_post(ep, w,
                                                      {.call = "fi_tsend",
                                                       .buf = buf,
                                                       .len = len,
                                                       .desc = desc,
                                                       .dest = dest,
                                                       .context = context,
                                                       .tag = tag})
                                        : std::nullopt)
      return *posted;
    if (change.changed_to_many())
      return w.inner_tagged->sendv(ep, change.iov(), change.desc(), change.count(), dest, tag,
                                   context);
    return w.inner_tagged->send(ep, buf, change.length(), desc, dest, tag, context);
  });
}

ssize_t tagged_sendv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t dest,
                     uint64_t tag, void* context) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_tagged(ep);
  const IovChange change(w, Side::kSend, "fi_tsendv", iov, desc, count);
  return counted_post(w, Side::kSend, "fi_tsendv", context, [&] {
    return w.inner_tagged->sendv(ep, change.iov(), change.desc(), change.count(), dest, tag,
                                 context);
  });
}

ssize_t tagged_sendmsg(fid_ep* ep, const fi_msg_tagged* msg, uint64_t flags) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_tagged(ep);
  const IovChange change(w, Side::kSend, "fi_tsendmsg", msg->msg_iov, msg->desc, msg->iov_count);
  const fi_msg_tagged changed = change.applied_to(*msg);
  return counted_post(w, Side::kSend, "fi_tsendmsg", msg->context,
                      [&] { return w.inner_tagged->sendmsg(ep, &changed, flags); });
}

ssize_t tagged_inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest, uint64_t tag) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_tagged(ep);
  return counted_post(w, Side::kSend, "fi_tinject", nullptr, [&] {
    if (auto posted = inline_post(ep, w,
                                  {.call = "fi_tinject",
                                   .inject = true,
                                   .buf = buf,
                                   .len = len,
                                   .dest = dest,
                                   .tag = tag}))
      return *posted;
    return w.inner_tagged->inject(ep, buf, len, dest, tag);
  });
}

ssize_t tagged_senddata(fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data,
                        fi_addr_t dest, uint64_t tag, void* context) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_tagged(ep);
  const iovec iov{const_cast<void*>(buf), len};
  void* descs[1] = {desc};
  const IovChange change(w, Side::kSend, "fi_tsenddata", &iov, descs, 1);
  return counted_post(w, Side::kSend, "fi_tsenddata", context, [&] {
    if (auto posted = !change.changed() ? inline_post(ep, w,
                                                      {.call = "fi_tsenddata",
                                                       .buf = buf,
                                                       .len = len,
                                                       .desc = desc,
                                                       .dest = dest,
                                                       .context = context,
                                                       .data = data,
                                                       .tag = tag})
                                        : std::nullopt)
      return *posted;
    if (change.changed_to_many()) {
      const fi_msg_tagged message = change.applied_to(
          fi_msg_tagged{.addr = dest, .tag = tag, .context = context, .data = data});
      return w.inner_tagged->sendmsg(ep, &message, FI_REMOTE_CQ_DATA | FI_COMPLETION);
    }
    return w.inner_tagged->senddata(ep, buf, change.length(), desc, data, dest, tag, context);
  });
}

ssize_t tagged_injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest,
                          uint64_t tag) {
  PostAttempt attempt;  // what it counts stands once the provider takes the post
  WrappedEp& w = from_tagged(ep);
  return counted_post(w, Side::kSend, "fi_tinjectdata", nullptr, [&] {
    if (auto posted = inline_post(ep, w,
                                  {.call = "fi_tinjectdata",
                                   .inject = true,
                                   .buf = buf,
                                   .len = len,
                                   .dest = dest,
                                   .data = data,
                                   .tag = tag}))
      return *posted;
    return w.inner_tagged->injectdata(ep, buf, len, data, dest, tag);
  });
}

int ep_close(fid* fid) {
  auto* ep = reinterpret_cast<fid_ep*>(fid);
  WrappedEp* state = &from_fid(fid);
  if (ep->msg == &state->msg) ep->msg = const_cast<fi_ops_msg*>(state->inner_msg);
  if (ep->tagged == &state->tagged) ep->tagged = const_cast<fi_ops_tagged*>(state->inner_tagged);
  fid->ops = const_cast<fi_ops*>(state->inner_fid);
  const int closed = fid->ops->close(fid);
  delete state;
  return closed;
}

void replace_msg_ops(fi_ops_msg& ops);
void replace_tagged_ops(fi_ops_tagged& ops);

// Takes (again) the endpoint's current message and tagged tables as the inner ones: a provider
// may install other tables when the endpoint is enabled (ofi_rxm does).
void take_tables(fid_ep* ep, WrappedEp& state) {
  if (ep->msg != nullptr && ep->msg != &state.msg) {
    state.inner_msg = ep->msg;
    std::memcpy(&state.msg, ep->msg, std::min(sizeof state.msg, ep->msg->size));
    replace_msg_ops(state.msg);
    ep->msg = &state.msg;
  }
  if (ep->tagged != nullptr && ep->tagged != &state.tagged) {
    state.inner_tagged = ep->tagged;
    std::memcpy(&state.tagged, ep->tagged, std::min(sizeof state.tagged, ep->tagged->size));
    replace_tagged_ops(state.tagged);
    ep->tagged = &state.tagged;
  }
}

// A CQ bound for transmits or receives: what its entries are when they carry no flags, and
// where a completion the inline family owes the program goes.
int ep_bind(fid* fid, struct fid* bound, uint64_t flags) {
  WrappedEp& state = from_fid(fid);
  const ProviderCall inside;
  const int result = state.inner_fid->bind(fid, bound, flags);
  if (result != 0 || bound == nullptr || bound->fclass != FI_CLASS_CQ) return result;
  if (PostedOperations::wanted()) PostedOperations::get().bound(bound, flags);
  if ((flags & FI_TRANSMIT) != 0) {
    state.inline_endpoint.transmit_cq = reinterpret_cast<fid_cq*>(bound);
    state.inline_endpoint.selective_completion = (flags & FI_SELECTIVE_COMPLETION) != 0;
  }
  return result;
}

int ep_control(fid* fid, int command, void* arg) {
  auto* ep = reinterpret_cast<fid_ep*>(fid);
  WrappedEp& state = from_fid(fid);
  const ProviderCall inside;
  const int result = state.inner_fid->control(fid, command, arg);
  if (state.wraps_posts) take_tables(ep, state);
  return result;
}

void replace_msg_ops(fi_ops_msg& ops) {
  ops.recv = msg_recv;
  ops.recvv = msg_recvv;
  ops.recvmsg = msg_recvmsg;
  ops.send = msg_send;
  ops.sendv = msg_sendv;
  ops.sendmsg = msg_sendmsg;
  ops.inject = msg_inject;
  ops.senddata = msg_senddata;
  ops.injectdata = msg_injectdata;
}

void replace_tagged_ops(fi_ops_tagged& ops) {
  ops.recv = tagged_recv;
  ops.recvv = tagged_recvv;
  ops.recvmsg = tagged_recvmsg;
  ops.send = tagged_send;
  ops.sendv = tagged_sendv;
  ops.sendmsg = tagged_sendmsg;
  ops.inject = tagged_inject;
  ops.senddata = tagged_senddata;
  ops.injectdata = tagged_injectdata;
}

}  // namespace

thread_local int ProviderCall::depth = 0;

uint64_t receive_queue_of_layer(const char* layer) { return std::hash<std::string_view>{}(layer); }

void wrap_endpoint(fid_ep* ep, const fi_info* info, const char* layer, bool programs_own) {
  Plan& plan = Plan::get();
  if (plan.empty() || ep->fid.ops == nullptr) return;
  auto* state = new WrappedEp{};
  state->inner_fid = ep->fid.ops;
  state->layer = layer;
  state->programs_own = programs_own;
  state->inline_endpoint.layer = layer;
  if (info != nullptr && info->tx_attr != nullptr)
    state->inline_endpoint.inject_size = info->tx_attr->inject_size;
  if (info != nullptr && info->domain_attr != nullptr)
    state->inline_endpoint.local_registrations = (info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
  const bool inline_faults = plan.has(FaultKind::kInline);
  state->wraps_posts = plan.has(FaultKind::kFailPost) || plan.has(FaultKind::kSegmentCount) ||
                       plan.has(FaultKind::kRewriteField) || plan.has_data_rules() ||
                       plan.filters_completions_by_post() || inline_faults || plan.maps_sites();
  if (state->wraps_posts) take_tables(ep, *state);
  state->fid_ops = *ep->fid.ops;
  state->fid_ops.close = ep_close;
  state->fid_ops.control = ep_control;
  if (PostedOperations::wanted() || inline_faults) state->fid_ops.bind = ep_bind;
  ep->fid.ops = &state->fid_ops;
  log_event({{"event", "instrumented"},
             {"object", "endpoint"},
             {"layer", layer},
             {"programs_own", programs_own}});
}

}  // namespace faultline::transports::interpose
