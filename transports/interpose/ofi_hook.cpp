// The libfabric hook provider: loaded from FI_PROVIDER_PATH and enabled by
// FI_HOOK=faultline, it wraps every fabric an unmodified program (or a utility provider such
// as ofi_rxm, for its core provider) opens. Each domain's and each CQ's ops table is copied
// per object and the copy's entries replaced, so the program's own calls reach the fault
// rules of FAULTLINE_FAULTS; what was instrumented and every fault applied are logged as
// JSON lines to FAULTLINE_FAULT_LOG.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_prov.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "call_sites.hpp"
#include "event_log.hpp"
#include "faultline/transports/ofi/ofi_status_map.hpp"
#include "ofi_endpoint.hpp"
#include "ofi_fabric.hpp"
#include "ofi_inline.hpp"
#include "ofi_limits.hpp"
#include "ofi_provider_call.hpp"
#include "post_attempt.hpp"
#include "posted_buffers.hpp"
#include "posted_operations.hpp"
#include "process_plan.hpp"
#include "progress.hpp"

namespace faultline::transports::interpose {

namespace {

// A prov_errno no provider uses, so strerror can say the error was injected.
constexpr int kInjectedProvErrno = 0x7a17;
constexpr const char* kInjectedText = "completion error injected by faultline (FAULTLINE_FAULTS)";

// The CQs this thread is inside a read of: ofi_rxm's read calls its own readfrom through the
// ops table, and that inner read must neither count nor hold entries a second time.
thread_local std::vector<const fid_cq*> reading;

size_t entry_size(fi_cq_format format) {
  switch (format) {
    case FI_CQ_FORMAT_MSG: return sizeof(fi_cq_msg_entry);
    case FI_CQ_FORMAT_DATA: return sizeof(fi_cq_data_entry);
    case FI_CQ_FORMAT_TAGGED: return sizeof(fi_cq_tagged_entry);
    case FI_CQ_FORMAT_UNSPEC:
    case FI_CQ_FORMAT_CONTEXT: return sizeof(fi_cq_entry);
  }
  return sizeof(fi_cq_entry);
}

// One wrapped CQ. `ops` stays first: the CQ's ops pointer is the address of this object.
struct WrappedCq {
  fi_ops_cq ops{};
  fi_ops fid_ops{};
  const fi_ops_cq* inner = nullptr;
  const fi_ops* inner_fid = nullptr;
  const void* fid = nullptr;  // the CQ itself, as an endpoint binds it
  std::string layer;
  bool programs_own = false;  // opened by the program, not by a provider beneath it
  fi_cq_format format = FI_CQ_FORMAT_CONTEXT;
  size_t entry_bytes = sizeof(fi_cq_entry);
  std::mutex mutex;
  std::deque<std::vector<std::byte>> held;  // entries read, to hand out after the error
  std::optional<fi_cq_err_entry> injected;  // the error the next readerr returns
};

WrappedCq& wrapped(fid_cq* cq) { return *reinterpret_cast<WrappedCq*>(cq->ops); }

uint64_t entry_flags(const WrappedCq& cq, const std::byte* entry) {
  if (cq.format == FI_CQ_FORMAT_CONTEXT || cq.format == FI_CQ_FORMAT_UNSPEC) return 0;
  fi_cq_msg_entry msg;
  std::memcpy(&msg, entry, sizeof msg);
  return msg.flags;
}

Side side_of(uint64_t flags) {
  if ((flags & (FI_RECV | FI_REMOTE_WRITE)) != 0) return Side::kRecv;
  if ((flags & (FI_SEND | FI_WRITE | FI_READ)) != 0) return Side::kSend;
  return Side::kAny;  // the context format carries no flags
}

std::optional<transports::Opcode> opcode_of(uint64_t flags) {
  if ((flags & FI_RECV) != 0) return transports::Opcode::kRecv;
  if ((flags & FI_WRITE) != 0) return transports::Opcode::kRdmaWrite;
  if ((flags & FI_READ) != 0) return transports::Opcode::kRdmaRead;
  if ((flags & FI_SEND) != 0) return transports::Opcode::kSend;
  return std::nullopt;
}

// The rule that faults this successful entry, if one fires. An entry without flags (the
// context format) is matched by what was posted on its context, where that was recorded; its
// site is its post's.
std::optional<FiredFault> firing_rule(const WrappedCq& cq, const std::byte* entry) {
  Event event;
  std::string site;  // the post's, where it was seen
  const uint64_t flags = entry_flags(cq, entry);
  event.side = side_of(flags);
  event.opcode = opcode_of(flags);
  if (PostedOperations::wanted()) {
    PostedOperations& posted_operations = PostedOperations::get();
    if (event.side == Side::kAny) event.side = posted_operations.side_of_cq(cq.fid);
    fi_cq_entry context{};
    std::memcpy(&context, entry, sizeof context);
    const auto posted =
        posted_operations.take(receive_queue_of_layer(cq.layer.c_str()),
                               reinterpret_cast<uintptr_t>(context.op_context), event.side);
    if (posted && event.side == Side::kAny) event.side = posted->side;
    if (posted && !event.opcode) event.opcode = posted->opcode;
    if (posted) site = posted->site;
  }
  event.layer = cq.layer;
  event.outermost = cq.programs_own;
  event.site = site;
  if (Plan::get().maps_sites()) note_site(event, "fi_cq_read");
  return Plan::get().completion_fault(event);
}

// Every entry format starts with the context the operation was posted with.
void* op_context_of(const std::byte* entry) {
  fi_cq_entry context{};
  std::memcpy(&context, entry, sizeof context);
  return context.op_context;
}

// A receive's recorded buffer: changed by a data rule, or forgotten.
nlohmann::json apply_data(const WrappedCq& cq, const std::byte* entry, const FiredFault* rule) {
  if (!Plan::get().has_data_rules()) return nlohmann::json::object();
  fi_cq_tagged_entry full{};
  std::memcpy(&full, entry, cq.entry_bytes);
  const uint64_t queue = receive_queue_of_layer(cq.layer.c_str());
  const auto context = reinterpret_cast<uintptr_t>(full.op_context);
  if (rule == nullptr || rule->data == DataAction::kKeep) {
    PostedBuffers::get().forget(queue, context);
    return nlohmann::json::object();
  }
  const bool has_len = cq.entry_bytes >= sizeof(fi_cq_msg_entry);
  const size_t delivered = has_len ? full.len : SIZE_MAX;
  return data_effect(PostedBuffers::get().apply(queue, context, rule->data, delivered));
}

fi_cq_err_entry injected_error(const WrappedCq& cq, const std::byte* entry,
                               const FiredFault& rule) {
  fi_cq_err_entry error{};
  fi_cq_tagged_entry full{};
  std::memcpy(&full, entry, cq.entry_bytes);
  error.op_context = full.op_context;
  if (cq.entry_bytes >= sizeof(fi_cq_msg_entry)) {
    error.flags = full.flags;
    error.len = full.len;
  }
  if (cq.entry_bytes >= sizeof(fi_cq_data_entry)) {
    error.buf = full.buf;
    error.data = full.data;
  }
  if (cq.entry_bytes >= sizeof(fi_cq_tagged_entry)) error.tag = full.tag;
  error.err = transports::ofi::ofi_error_for_status(rule.status);
  error.prov_errno = rule.vendor_err != 0 ? static_cast<int>(rule.vendor_err) : kInjectedProvErrno;
  return error;
}

// Hands the entries after `first` out on later reads, after what is already held.
void hold_from(WrappedCq& cq, const std::byte* buf, ssize_t first, ssize_t count) {
  for (ssize_t j = first; j < count; ++j) {
    const std::byte* later = buf + j * cq.entry_bytes;
    cq.held.emplace_back(later, later + cq.entry_bytes);
  }
}

// Entries the program gets from `count` read: a rewritten one becomes the pending error (the
// read returns those before it, and holds those after); a dropped one is removed; a duplicate
// is handed out again by the next read.
ssize_t apply_rules(WrappedCq& cq, std::byte* buf, ssize_t count) {
  for (ssize_t i = 0; i < count; ++i) {
    std::byte* entry = buf + i * cq.entry_bytes;
    if (hidden_send_completed(op_context_of(entry))) {  // the hook's own send: not the program's
      std::memmove(entry, entry + cq.entry_bytes, (count - i - 1) * cq.entry_bytes);
      --count;
      --i;
      continue;
    }
    auto rule = firing_rule(cq, entry);
    auto details = apply_data(cq, entry, rule ? &*rule : nullptr);
    if (!rule) continue;
    details["layer"] = cq.layer;
    details["call"] = "fi_cq_read";
    if (rule->info().effect.rewrite_status) {
      cq.injected = injected_error(cq, entry, *rule);
      hold_from(cq, buf, i + 1, count);
      details["err"] = cq.injected->err;
      log_fault(*rule, std::move(details));
      return i > 0 ? i : -FI_EAVAIL;
    }
    log_fault(*rule, std::move(details));
    if (rule->info().effect.drop) {
      std::memmove(entry, entry + cq.entry_bytes, (count - i - 1) * cq.entry_bytes);
      --count;
      --i;
    } else if (rule->info().effect.duplicate) {
      hold_from(cq, buf, i, count);  // this entry again, then the rest
      return i + 1;
    }
  }
  return count;
}

// What every read variant shares: pending state first, then the inner read and the rules.
template <typename InnerRead>
ssize_t read_applying_rules(fid_cq* cq_fid, void* buf, size_t count, InnerRead inner_read) {
  // Without rules the CQ is not wrapped at all (wrap_cq).
  // A provider reading its own CQ inside the program's read: straight through.
  if (std::find(reading.begin(), reading.end(), cq_fid) != reading.end()) return inner_read();
  WrappedCq& cq = wrapped(cq_fid);
  {
    std::lock_guard lock(cq.mutex);
    if (cq.injected) return -FI_EAVAIL;
    if (!cq.held.empty()) {
      size_t n = 0;
      for (; n < count && !cq.held.empty(); ++n) {
        std::memcpy(static_cast<std::byte*>(buf) + n * cq.entry_bytes, cq.held.front().data(),
                    cq.entry_bytes);
        cq.held.pop_front();
      }
      return static_cast<ssize_t>(n);
    }
  }
  // A dropped completion is lost, never the ones behind it: a read whose every entry was
  // dropped, and which filled what was asked (more may wait), reads again.
  for (;;) {
    reading.push_back(cq_fid);
    ssize_t read = 0;
    {
      const ProviderCall inside;
      read = inner_read();
    }
    reading.pop_back();
    if (read <= 0) return read;
    const PostAttempt::Outside completions;  // a provider's progress inside a post: not the post's
    std::lock_guard lock(cq.mutex);
    const ssize_t handed = apply_rules(cq, static_cast<std::byte*>(buf), read);
    if (handed != 0) return handed;
    if (static_cast<size_t>(read) < count) return -FI_EAGAIN;  // the CQ is empty
  }
}

// The same, each read that hands the program a completion counted as progress.
template <typename InnerRead>
ssize_t guarded_read(fid_cq* cq_fid, void* buf, size_t count, InnerRead inner_read) {
  const ssize_t read = read_applying_rules(cq_fid, buf, count, inner_read);
  if (read > 0) note_progress();
  return read;
}

ssize_t cq_read(fid_cq* cq, void* buf, size_t count) {
  return guarded_read(cq, buf, count, [&] { return wrapped(cq).inner->read(cq, buf, count); });
}

ssize_t cq_readfrom(fid_cq* cq, void* buf, size_t count, fi_addr_t* src) {
  return guarded_read(cq, buf, count,
                      [&] { return wrapped(cq).inner->readfrom(cq, buf, count, src); });
}

ssize_t cq_sread(fid_cq* cq, void* buf, size_t count, const void* cond, int timeout) {
  return guarded_read(cq, buf, count,
                      [&] { return wrapped(cq).inner->sread(cq, buf, count, cond, timeout); });
}

ssize_t cq_sreadfrom(fid_cq* cq, void* buf, size_t count, fi_addr_t* src, const void* cond,
                     int timeout) {
  return guarded_read(cq, buf, count, [&] {
    return wrapped(cq).inner->sreadfrom(cq, buf, count, src, cond, timeout);
  });
}

ssize_t cq_readerr(fid_cq* cq_fid, fi_cq_err_entry* out, uint64_t flags) {
  WrappedCq& cq = wrapped(cq_fid);
  {
    std::lock_guard lock(cq.mutex);
    if (cq.injected) {
      *out = *cq.injected;
      cq.injected.reset();
      return 1;
    }
  }
  const ssize_t read = cq.inner->readerr(cq_fid, out, flags);
  if (read > 0) note_progress();
  if (read > 0 && hidden_send_completed(out->op_context)) {
    // The send behind an inject failed: an inject reports nothing to the program.
    log_event({{"event", "hidden_send_error"},
               {"layer", cq.layer},
               {"err", out->err},
               {"error", fi_strerror(out->err)}});
    return -FI_EAGAIN;
  }
  return read;
}

const char* cq_strerror(fid_cq* cq, int prov_errno, const void* err_data, char* buf, size_t len) {
  if (prov_errno == kInjectedProvErrno) {
    if (buf != nullptr && len > 0) {
      std::strncpy(buf, kInjectedText, len - 1);
      buf[len - 1] = '\0';
      return buf;
    }
    return kInjectedText;
  }
  return wrapped(cq).inner->strerror(cq, prov_errno, err_data, buf, len);
}

int cq_close(fid* fid) {
  auto* cq = reinterpret_cast<fid_cq*>(fid);
  WrappedCq* state = &wrapped(cq);
  cq->ops = const_cast<fi_ops_cq*>(state->inner);
  fid->ops = const_cast<fi_ops*>(state->inner_fid);
  const int closed = fid->ops->close(fid);
  delete state;
  return closed;
}

void wrap_cq(fid_cq* cq, const fi_cq_attr* attr, const std::string& layer, bool programs_own) {
  nlohmann::json event = {{"event", "instrumented"},
                          {"object", "cq"},
                          {"layer", layer},
                          {"programs_own", programs_own}};
  if (Plan::get().empty()) {
    // Nothing to inject: the CQ keeps the provider's own read path (an idle interposer costs
    // nothing per poll), and the event still says the hook reached it.
    event["passthrough"] = true;
    log_event(std::move(event));
    return;
  }
  auto* state = new WrappedCq();
  state->inner = cq->ops;
  state->inner_fid = cq->fid.ops;
  state->fid = cq;
  std::memcpy(&state->ops, cq->ops, std::min(sizeof state->ops, cq->ops->size));
  state->fid_ops = *cq->fid.ops;
  state->layer = layer;
  state->programs_own = programs_own;
  state->format = attr != nullptr ? attr->format : FI_CQ_FORMAT_CONTEXT;
  state->entry_bytes = entry_size(state->format);
  state->ops.read = cq_read;
  state->ops.readfrom = cq_readfrom;
  state->ops.readerr = cq_readerr;
  state->ops.sread = cq_sread;
  state->ops.sreadfrom = cq_sreadfrom;
  state->ops.strerror = cq_strerror;
  state->fid_ops.close = cq_close;
  cq->ops = &state->ops;
  cq->fid.ops = &state->fid_ops;
  event["format"] = static_cast<int>(state->format);
  log_event(std::move(event));
}

// One wrapped domain: its ops copy first, then what cq_open needs.
struct WrappedDomain {
  fi_ops_domain ops{};
  const fi_ops_domain* inner = nullptr;
  std::string layer;
  // Opened by the program (not by a utility provider inside the program's fi_domain): its
  // CQs and endpoints are the program's own, whichever call later creates them.
  bool programs_own = false;
};

int domain_cq_open(fid_domain* domain, fi_cq_attr* attr, fid_cq** cq, void* context) {
  auto& state = *reinterpret_cast<WrappedDomain*>(domain->ops);
  const ProviderCall inside;
  const int opened = state.inner->cq_open(domain, attr, cq, context);
  if (opened == 0) wrap_cq(*cq, attr, state.layer, state.programs_own);
  return opened;
}

int domain_endpoint(fid_domain* domain, fi_info* info, fid_ep** ep, void* context) {
  auto& state = *reinterpret_cast<WrappedDomain*>(domain->ops);
  const ProviderCall inside;
  if (state.programs_own && ProviderCall::from_program())
    if (const int refused = refuse_endpoint(info); refused != 0) return refused;
  const int opened = state.inner->endpoint(domain, info, ep, context);
  if (opened == 0) wrap_endpoint(*ep, info, state.layer.c_str(), state.programs_own);
  return opened;
}

void wrap_domain(fid_domain* domain, const std::string& layer, bool programs_own) {
  // Kept for the life of the process: a domain's close leaves its ops pointer behind.
  auto* state = new WrappedDomain();
  state->inner = domain->ops;
  std::memcpy(&state->ops, domain->ops, std::min(sizeof state->ops, domain->ops->size));
  state->layer = layer;
  state->programs_own = programs_own;
  state->ops.cq_open = domain_cq_open;
  state->ops.endpoint = domain_endpoint;
  domain->ops = &state->ops;
  log_event({{"event", "instrumented"},
             {"object", "domain"},
             {"layer", layer},
             {"programs_own", programs_own}});
}

struct WrappedFabric {
  fi_ops_fabric ops{};
  const fi_ops_fabric* inner = nullptr;
  std::string layer;
};

int fabric_domain(fid_fabric* fabric, fi_info* info, fid_domain** domain, void* context) {
  auto& state = *reinterpret_cast<WrappedFabric*>(fabric->ops);
  const ProviderCall inside;
  const int opened = state.inner->domain(fabric, info, domain, context);
  if (opened == 0) wrap_domain(*domain, state.layer, ProviderCall::from_program());
  return opened;
}

int fabric_domain2(fid_fabric* fabric, fi_info* info, fid_domain** domain, uint64_t flags,
                   void* context) {
  auto& state = *reinterpret_cast<WrappedFabric*>(fabric->ops);
  const ProviderCall inside;
  const int opened = state.inner->domain2(fabric, info, domain, flags, context);
  if (opened == 0) wrap_domain(*domain, state.layer, ProviderCall::from_program());
  return opened;
}

// libfabric calls this for every fabric opened while FI_HOOK names us: the fabric to hook in
// attr->fabric, its provider as the context. The fabric is patched in place and returned.
int hook_fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context) {
  const auto* provider = static_cast<const fi_provider*>(context);
  wrap_fabric(attr->fabric, provider != nullptr && provider->name != nullptr ? provider->name : "",
              "FI_HOOK");
  *fabric = attr->fabric;
  return 0;
}

fi_provider faultline_hook = {
    .version = FI_VERSION(1, 0),
    .fi_version = FI_VERSION(1, 17),
    .context = {},
    .name = "ofi_hook_faultline",
    .getinfo = nullptr,  // no getinfo: libfabric registers a hook provider
    .fabric = hook_fabric,
    .cleanup = nullptr,
};

}  // namespace

bool hand_out_completion(fid_cq* cq, const fi_cq_tagged_entry& entry) {
  if (cq == nullptr || cq->fid.ops == nullptr || cq->fid.ops->close != cq_close) return false;
  WrappedCq& state = wrapped(cq);
  std::vector<std::byte> bytes(state.entry_bytes);
  std::memcpy(bytes.data(), &entry, state.entry_bytes);
  std::lock_guard lock(state.mutex);
  state.held.push_back(std::move(bytes));
  return true;
}

bool wrap_fabric(fid_fabric* fabric, const std::string& layer, const char* through) {
  if (fabric->ops->domain == fabric_domain) return false;
  auto* state = new WrappedFabric();
  state->inner = fabric->ops;
  std::memcpy(&state->ops, fabric->ops, std::min(sizeof state->ops, fabric->ops->size));
  state->layer = layer;
  state->ops.domain = fabric_domain;
  if (fabric->ops->size >= offsetof(fi_ops_fabric, domain2) + sizeof(state->ops.domain2) &&
      fabric->ops->domain2 != nullptr) {
    state->ops.domain2 = fabric_domain2;
  }
  fabric->ops = &state->ops;
  log_event({{"event", "instrumented"},
             {"object", "fabric"},
             {"layer", state->layer},
             {"through", through}});
  return true;
}

}  // namespace faultline::transports::interpose

extern "C" FI_EXT_INI { return &faultline::transports::interpose::faultline_hook; }
