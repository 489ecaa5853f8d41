#include "ofi_endpoint.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <thread>

#include "faultline/transports/limits_check.hpp"
#include "faultline/transports/ofi/ofi_status_map.hpp"
#include "ofi_device.hpp"
#include "ofi_memory_region.hpp"

namespace faultline::transports::ofi {

namespace {

using Clock = std::chrono::steady_clock;

// Spin this long on an empty CQ before easing off with short sleeps.
constexpr auto kSpinBeforeSleep = std::chrono::milliseconds(1);
constexpr auto kIdleSleep = std::chrono::microseconds(50);
// How long deferred posts may be refused with -FI_EAGAIN before they fail: rxm answers a post
// to a peer whose process is gone with -FI_EAGAIN for ever (each retry reconnects and is
// refused), which would otherwise be a silent hang.
constexpr auto kRefusedBudget = std::chrono::seconds(5);

std::atomic<uint32_t> next_endpoint_number{1};

// Why shm's fi_enable failed, where its errors have a known cause.
std::string shm_enable_hint(int rc) {
  if (rc == -FI_ENOENT) {
    return "the shm provider keeps its regions in /dev/shm: check that /dev/shm exists and is "
           "a writable tmpfs (mount -t tmpfs tmpfs /dev/shm)";
  }
  if (rc == -FI_EBUSY) {
    return "a region of the same name (PID:DOMAIN:EP) is in /dev/shm and its pid is alive: "
           "another process of this pid left it (killed with SIGKILL) or another container "
           "shares the pid; remove /dev/shm/" +
           std::to_string(::getpid()) + ":* if no process of yours uses them";
  }
  return "";
}

}  // namespace

OfiEndpoint::OfiEndpoint(OfiDevice& device, const EndpointConfig& config)
    : device_(device),
      config_(config),
      endpoint_number_(next_endpoint_number.fetch_add(1)),
      send_contexts_(config.send_depth),
      recv_contexts_(config.recv_depth) {
  for (auto& context : send_contexts_) free_send_.push_back(&context);
  for (auto& context : recv_contexts_) {
    context.is_recv = true;
    free_recv_.push_back(&context);
  }
}

OfiEndpoint::~OfiEndpoint() {
  // Cancel what is still posted and drain the CQ, so no completion references a context that
  // is about to go away and nothing is left behind for a later endpoint. An endpoint whose
  // creation failed before fi_enable has nothing posted, and reading its CQ crashes shm.
  if (ep_ && enabled_) {
    // Work still waiting for room was never handed to the provider: it goes with the endpoint
    // (submitting it now would read buffers the caller may already have freed).
    for (OpContext* deferred : deferred_) release(deferred);
    deferred_.clear();
    for (auto& context : recv_contexts_) {
      if (context.in_use) fi_cancel(&ep_->fid, &context.fi_ctx);
    }
    const auto deadline = Clock::now() + std::chrono::milliseconds(200);
    while (Clock::now() < deadline && progress().ok()) {
      if (free_send_.size() == send_contexts_.size() &&
          free_recv_.size() == recv_contexts_.size()) {
        break;
      }
    }
  }
  device_.endpoint_closed(this);
}

Result<std::unique_ptr<OfiEndpoint>> OfiEndpoint::create(OfiDevice& device,
                                                         const EndpointConfig& config) {
  const DeviceInfo& info = device.info();
  Status limits = check_endpoint_config(config, info.limits);
  if (!limits.ok() && !config.raw) {
    Error error = std::move(limits).take_error();
    error.where = {"ofi", info.native_provider, info.name, std::nullopt, std::nullopt};
    return error;
  }
  if (config.send_depth == 0 || config.recv_depth == 0) {
    return Error{ErrorCode::kInvalidArgument, "send_depth and recv_depth must be at least 1"};
  }
  if (!config.gid.empty() || config.path_mtu != 0) {
    return Error{ErrorCode::kUnsupported,
                 "gid and path_mtu are verbs (RoCE) settings; libfabric endpoints choose "
                 "neither"}
        .with_hint("run the scenario with --transport verbs, or leave gid and path_mtu out");
  }

  std::unique_ptr<OfiEndpoint> endpoint(new OfiEndpoint(device, config));
  endpoint->post_limits_ = endpoint->post_limits();
  InfoPtr ep_info{api::dupinfo(&device.fabric_info())};
  ep_info->tx_attr->size = config.send_depth;
  ep_info->rx_attr->size = config.recv_depth;
  ep_info->tx_attr->iov_limit = config.max_send_sge;
  ep_info->rx_attr->iov_limit = config.max_recv_sge;

  auto native_failure = [&](const char* call, int rc) -> Error {
    Error error = ofi_call_error(call, rc, &info);
    if (!limits.ok()) {
      error.message = "requested beyond the advertised limits: " + limits.error().message;
    }
    return error;
  };

  fid_ep* ep = nullptr;
  if (int rc = fi_endpoint(device.domain(), ep_info.get(), &ep, nullptr); rc != 0) {
    return native_failure("fi_endpoint", rc);
  }
  endpoint->ep_.reset(ep);

  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  av_attr.count = 4;
  fid_av* av = nullptr;
  if (int rc = fi_av_open(device.domain(), &av_attr, &av, nullptr); rc != 0) {
    return native_failure("fi_av_open", rc);
  }
  endpoint->av_.reset(av);

  fi_cq_attr cq_attr{};
  cq_attr.size = config.effective_cq_depth();
  cq_attr.format = FI_CQ_FORMAT_DATA;
  cq_attr.wait_obj = FI_WAIT_NONE;
  fid_cq* cq = nullptr;
  if (int rc = fi_cq_open(device.domain(), &cq_attr, &cq, nullptr); rc != 0) {
    return native_failure("fi_cq_open", rc);
  }
  endpoint->cq_.reset(cq);

  if (int rc = fi_ep_bind(ep, &av->fid, 0); rc != 0) return native_failure("fi_ep_bind(av)", rc);
  if (int rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV); rc != 0) {
    return native_failure("fi_ep_bind(cq)", rc);
  }
  if (int rc = fi_enable(ep); rc != 0) {
    Error error = native_failure("fi_enable", rc);
    if (info.provider == "shm") error.hint = shm_enable_hint(rc);
    return error;
  }
  endpoint->enabled_ = true;

  size_t length = 0;
  fi_getname(&ep->fid, nullptr, &length);  // -FI_ETOOSMALL, with the size
  endpoint->address_.resize(length);
  if (int rc = fi_getname(&ep->fid, endpoint->address_.data(), &length); rc != 0) {
    return native_failure("fi_getname", rc);
  }
  endpoint->address_.resize(length);
  return endpoint;
}

Error OfiEndpoint::error_here(ErrorCode code, std::string message) const {
  const DeviceInfo& info = device_.info();
  Error error{code, std::move(message)};
  error.where = {"ofi", info.native_provider, info.name, std::nullopt, endpoint_number_};
  return error;
}

Status OfiEndpoint::connect(std::span<const std::byte> peer_address) {
  if (peer_address.empty()) {
    return error_here(ErrorCode::kInvalidArgument, "the peer address is empty");
  }
  fi_addr_t peer = FI_ADDR_UNSPEC;
  int rc = fi_av_insert(av_.get(), peer_address.data(), 1, &peer, 0, nullptr);
  if (rc != 1) {
    Error error = ofi_call_error(
        "fi_av_insert", rc < 0 ? rc : -FI_EINVAL, &device_.info(),
        "the peer address (" + std::to_string(peer_address.size()) + " bytes) was not accepted");
    error.where.qp = endpoint_number_;
    return std::move(error).with_hint(
        "the peer must use the same provider and a reachable address family");
  }
  peer_ = peer;
  return {};
}

Status OfiEndpoint::check_postable() const {
  if (errored_) {
    return error_here(ErrorCode::kInvalidArgument,
                      "post on an endpoint in the error state (after modify_to_error)");
  }
  if (peer_ == FI_ADDR_UNSPEC) {
    return error_here(ErrorCode::kInvalidArgument, "post before connect");
  }
  return {};
}

Result<OfiEndpoint::OpContext*> OfiEndpoint::acquire(bool is_recv) {
  auto& free_list = is_recv ? free_recv_ : free_send_;
  if (free_list.empty()) {
    return error_here(
        ErrorCode::kLimitExceeded,
        std::string(is_recv ? "receive" : "send") +
            " queue full: " + std::to_string(is_recv ? config_.recv_depth : config_.send_depth) +
            " work requests outstanding (" + (is_recv ? "recv_depth" : "send_depth") + ")");
  }
  OpContext* context = free_list.back();
  free_list.pop_back();
  context->in_use = true;
  return context;
}

void OfiEndpoint::release(OpContext* context) {
  context->in_use = false;
  (context->is_recv ? free_recv_ : free_send_).push_back(context);
}

ssize_t OfiEndpoint::submit(OpContext& ctx) {
  fid_ep* ep = ep_.get();
  if (ctx.is_recv) {
    fi_msg msg{ctx.iov.data(), ctx.desc.data(), ctx.iov_count, peer_, &ctx.fi_ctx, 0};
    return fi_recvmsg(ep, &msg, ctx.flags);
  }
  switch (ctx.op) {
    case Opcode::kSend:
    case Opcode::kSendWithImm: {
      fi_msg msg{ctx.iov.data(), ctx.desc.data(), ctx.iov_count, peer_, &ctx.fi_ctx, ctx.data};
      return fi_sendmsg(ep, &msg, ctx.flags);
    }
    case Opcode::kRdmaWrite:
    case Opcode::kRdmaWriteWithImm:
    case Opcode::kRdmaRead: {
      fi_msg_rma msg{ctx.iov.data(), ctx.desc.data(), ctx.iov_count, peer_, &ctx.rma_iov, 1,
                     &ctx.fi_ctx,    ctx.data};
      return ctx.op == Opcode::kRdmaRead ? fi_readmsg(ep, &msg, ctx.flags)
                                         : fi_writemsg(ep, &msg, ctx.flags);
    }
    case Opcode::kRecv:
    case Opcode::kRecvRdmaWithImm: return -FI_EINVAL;
  }
  return -FI_EINVAL;
}

namespace {
const char* submit_call(bool is_recv, Opcode op) {
  if (is_recv) return "fi_recvmsg";
  if (op == Opcode::kRdmaRead) return "fi_readmsg";
  if (op == Opcode::kRdmaWrite || op == Opcode::kRdmaWriteWithImm) return "fi_writemsg";
  return "fi_sendmsg";
}
}  // namespace

Status OfiEndpoint::submit_or_defer(OpContext* ctx) {
  if (!deferred_.empty()) {  // keep posting order behind posts already waiting
    deferred_.push_back(ctx);
    return {};
  }
  const ssize_t rc = submit(*ctx);
  if (rc == -FI_EAGAIN) {
    deferred_.push_back(ctx);
    return {};
  }
  if (rc != 0) {
    const char* call = submit_call(ctx->is_recv, ctx->op);
    release(ctx);
    Error error = ofi_call_error(call, rc, &device_.info());
    error.where.qp = endpoint_number_;
    return error;
  }
  return {};
}

PostLimits OfiEndpoint::post_limits() const {
  const DeviceInfo& info = device_.info();
  // libfabric grants what fi_endpoint accepted: the endpoint's asks are its limits.
  return {.max_send_sge = config_.max_send_sge,
          .max_recv_sge = config_.max_recv_sge,
          .max_sge_rd = info.limits.max_sge_rd,
          .max_segments = kMaxSegments,
          .max_inline = config_.max_inline,
          .asked_inline = config_.max_inline,
          .driver_inline = config_.max_inline,
          .device_inline = info.limits.max_inline_data,
          .max_msg_size = info.limits.max_msg_size,
          .immediate_data = info.capabilities.send_with_imm};
}

Status OfiEndpoint::check_post(Status checked) const {
  if (checked.ok()) return checked;
  Error error = std::move(checked).take_error();
  const DeviceInfo& info = device_.info();
  error.where = {"ofi", info.native_provider, info.name, std::nullopt, endpoint_number_};
  return error;
}

Result<bool> OfiEndpoint::try_inject(const WorkRequest& request) {
  // Only an unsignaled inline send of one segment is fi_inject*: no context, no completion.
  if (!request.inline_data || request.signaled || request.segments.size() != 1 ||
      !deferred_.empty()) {
    return false;
  }
  fid_ep* ep = ep_.get();
  const Segment& segment = request.segments[0];
  const RemoteBuffer& remote = request.remote;
  const uint64_t data = request.imm.value_or(0);
  ssize_t rc = -FI_EINVAL;
  const char* call = "fi_inject";
  switch (request.op) {
    case Opcode::kSend: rc = fi_inject(ep, segment.addr, segment.length, peer_); break;
    case Opcode::kSendWithImm:
      call = "fi_injectdata";
      rc = fi_injectdata(ep, segment.addr, segment.length, data, peer_);
      break;
    case Opcode::kRdmaWrite:
      call = "fi_inject_write";
      rc = fi_inject_write(ep, segment.addr, segment.length, peer_, remote.addr, remote.key);
      break;
    case Opcode::kRdmaWriteWithImm:
      call = "fi_inject_writedata";
      rc = fi_inject_writedata(ep, segment.addr, segment.length, data, peer_, remote.addr,
                               remote.key);
      break;
    case Opcode::kRdmaRead:
    case Opcode::kRecv:
    case Opcode::kRecvRdmaWithImm: break;
  }
  if (rc == 0) return true;
  // No credit now: the caller falls back to a context that is retried, with the payload copied.
  if (rc == -FI_EAGAIN) return false;
  Error error = ofi_call_error(call, rc, &device_.info());
  error.where.qp = endpoint_number_;
  return error;
}

void OfiEndpoint::fill_segments(OpContext& ctx, std::span<const Segment> segments) {
  ctx.iov_count = segments.size();
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& segment = segments[i];
    ctx.iov[i] = {segment.addr, segment.length};
    const auto* region = static_cast<const OfiMemoryRegion*>(segment.region);
    ctx.desc[i] = region != nullptr ? region->descriptor() : nullptr;
  }
}

void OfiEndpoint::copy_inline(OpContext& ctx, std::span<const Segment> segments, size_t bytes) {
  // The caller may reuse an inline payload as soon as the post returns, but a refused post
  // is retried later: keep a copy and point one iov at it.
  ctx.flags |= FI_INJECT;
  ctx.inline_copy.resize(bytes);
  size_t offset = 0;
  for (const Segment& segment : segments) {
    std::memcpy(ctx.inline_copy.data() + offset, segment.addr, segment.length);
    offset += segment.length;
  }
  ctx.iov_count = 1;
  ctx.iov[0] = {ctx.inline_copy.data(), bytes};
  ctx.desc[0] = nullptr;
}

Status OfiEndpoint::post_send(const WorkRequest& request) {
  FAULTLINE_RETURN_IF_ERROR(check_postable());
  FAULTLINE_RETURN_IF_ERROR(check_post(check_send(request, post_limits_)));
  auto injected = try_inject(request);
  if (!injected.ok()) return std::move(injected).take_error();
  if (injected.value()) return {};

  auto context = acquire(false);
  if (!context.ok()) return std::move(context).take_error();
  OpContext* ctx = context.value();
  uint64_t bytes = 0;
  for (const Segment& segment : request.segments) bytes += segment.length;
  ctx->wr_id = request.wr_id;
  ctx->op = request.op;
  ctx->byte_len = static_cast<uint32_t>(bytes);
  ctx->signaled = request.signaled;
  ctx->data = request.imm.value_or(0);
  const bool carries_imm =
      request.op == Opcode::kSendWithImm || request.op == Opcode::kRdmaWriteWithImm;
  ctx->flags = carries_imm ? FI_REMOTE_CQ_DATA : 0;
  ctx->rma_iov = {request.remote.addr, bytes, request.remote.key};
  if (request.inline_data) {
    copy_inline(*ctx, request.segments, bytes);
  } else {
    fill_segments(*ctx, request.segments);
  }
  return submit_or_defer(ctx);
}

Status OfiEndpoint::post_recv(const RecvRequest& request) {
  FAULTLINE_RETURN_IF_ERROR(check_postable());
  FAULTLINE_RETURN_IF_ERROR(check_post(check_recv(request, post_limits_)));
  auto context = acquire(true);
  if (!context.ok()) return std::move(context).take_error();
  OpContext* ctx = context.value();
  ctx->wr_id = request.wr_id;
  ctx->op = Opcode::kRecv;
  ctx->signaled = true;
  ctx->flags = 0;
  fill_segments(*ctx, request.segments);
  return submit_or_defer(ctx);
}

bool OfiEndpoint::convert(const fi_cq_data_entry& entry, Completion& out) {
  out = Completion{};
  out.qp_num = endpoint_number_;
  auto* ctx = static_cast<OpContext*>(entry.op_context);
  const bool remote_data = (entry.flags & FI_REMOTE_CQ_DATA) != 0;
  if ((entry.flags & FI_REMOTE_WRITE) != 0 || (ctx == nullptr && remote_data)) {
    // An incoming write with immediate data. Only where the provider asks for FI_RX_CQ_DATA
    // does it consume a posted receive whose context comes back; elsewhere op_context is not
    // ours to read (shm in libfabric 1.17 leaves 0x1 there).
    out.op = Opcode::kRecvRdmaWithImm;
    out.byte_len = static_cast<uint32_t>(entry.len);
    out.imm = static_cast<uint32_t>(entry.data);
    if (ctx != nullptr && device_.info().capabilities.write_imm_consumes_recv) {
      out.wr_id = ctx->wr_id;
      release(ctx);
    }
    return true;
  }
  if (ctx == nullptr) return false;
  out.wr_id = ctx->wr_id;
  out.op = ctx->op;
  if (ctx->is_recv) {
    out.byte_len = static_cast<uint32_t>(entry.len);
    if (remote_data) out.imm = static_cast<uint32_t>(entry.data);
  } else {
    out.byte_len = ctx->byte_len;
  }
  const bool report = ctx->signaled;
  release(ctx);
  return report;
}

Completion OfiEndpoint::convert_error(const fi_cq_err_entry& entry) {
  Completion out;
  out.qp_num = endpoint_number_;
  // fi_cq_err_entry.err is a positive FI_E* value; shm in libfabric 1.17 stores it negated.
  // Map by magnitude and keep what the provider really wrote as the native status.
  out.status = completion_status_from_ofi_error(entry.err < 0 ? -entry.err : entry.err);
  out.native_status = entry.err;
  out.vendor_err = entry.prov_errno;
  out.byte_len = static_cast<uint32_t>(entry.len);
  out.native_text = std::string(ofi_error_name(entry.err < 0 ? -entry.err : entry.err));
  const char* provider_text =
      fi_cq_strerror(cq_.get(), entry.prov_errno, entry.err_data, nullptr, 0);
  if (provider_text != nullptr && *provider_text != '\0') {
    out.native_text += std::string(": ") + provider_text;
  }
  if (auto* ctx = static_cast<OpContext*>(entry.op_context); ctx != nullptr) {
    out.wr_id = ctx->wr_id;
    out.op = ctx->op;
    release(ctx);
  } else if ((entry.flags & FI_RECV) != 0) {
    out.op = Opcode::kRecv;
  }
  return out;
}

void OfiEndpoint::complete_unsubmitted(OpContext* ctx, CompletionStatus status, int native,
                                       std::string text) {
  Completion completion;
  completion.wr_id = ctx->wr_id;
  completion.op = ctx->op;
  completion.qp_num = endpoint_number_;
  completion.status = status;
  completion.native_status = native;
  completion.native_text = std::move(text);
  release(ctx);
  backlog_.push_back(std::move(completion));
}

void OfiEndpoint::fail_deferred() {
  const auto seconds = std::chrono::duration<double>(kRefusedBudget).count();
  for (OpContext* ctx : std::exchange(deferred_, {})) {
    complete_unsubmitted(ctx, CompletionStatus::kRetryExcErr, FI_EAGAIN,
                         std::string(submit_call(ctx->is_recv, ctx->op)) +
                             " still refused with -FI_EAGAIN after " +
                             std::to_string(seconds).substr(0, 3) +
                             " s: the provider cannot reach the peer (its process gone, or its "
                             "address refusing connections)");
  }
  refused_since_.reset();
}

Status OfiEndpoint::progress() {
  while (!deferred_.empty()) {
    OpContext* ctx = deferred_.front();
    const ssize_t rc = submit(*ctx);
    if (rc == -FI_EAGAIN) {
      const auto now = std::chrono::steady_clock::now();
      if (!refused_since_) refused_since_ = now;
      if (now - *refused_since_ >= kRefusedBudget) fail_deferred();
      break;
    }
    refused_since_.reset();
    deferred_.pop_front();
    if (rc != 0) {
      // The post was accepted earlier, so its failure arrives as an error completion.
      complete_unsubmitted(ctx, completion_status_from_ofi_error(static_cast<int>(-rc)),
                           static_cast<int>(-rc),
                           std::string(submit_call(ctx->is_recv, ctx->op)) +
                               " failed on retry: " + api::strerror(static_cast<int>(-rc)));
    }
  }
  // Not zeroed: fi_cq_read fills what it returns, and this runs on every spin of a poll.
  std::array<fi_cq_data_entry, 16> entries;
  ssize_t rc = fi_cq_read(cq_.get(), entries.data(), entries.size());
  if (rc > 0) {
    for (ssize_t i = 0; i < rc; ++i) {
      Completion completion;
      if (convert(entries[static_cast<size_t>(i)], completion)) backlog_.push_back(completion);
    }
    return {};
  }
  if (rc == -FI_EAGAIN) return {};
  if (rc == -FI_EAVAIL) {
    fi_cq_err_entry error_entry{};
    ssize_t err_rc = fi_cq_readerr(cq_.get(), &error_entry, 0);
    if (err_rc < 0) {
      if (err_rc == -FI_EAGAIN) return {};
      Error error = ofi_call_error("fi_cq_readerr", err_rc, &device_.info());
      error.where.qp = endpoint_number_;
      return error;
    }
    backlog_.push_back(convert_error(error_entry));
    return {};
  }
  Error error = ofi_call_error("fi_cq_read", rc, &device_.info());
  error.where.qp = endpoint_number_;
  return error;
}

Result<size_t> OfiEndpoint::poll(std::span<Completion> out, std::chrono::milliseconds timeout) {
  size_t filled = 0;
  const auto take_backlog = [&] {
    while (filled < out.size() && !backlog_.empty()) {
      out[filled++] = std::move(backlog_.front());
      backlog_.pop_front();
    }
  };
  take_backlog();
  if (filled > 0 || out.empty()) return filled;
  if (timeout.count() == 0) {  // a spinning caller: one progress, no clock
    FAULTLINE_RETURN_IF_ERROR(progress());
    take_backlog();
    return filled;
  }
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  for (;;) {
    take_backlog();
    if (filled > 0) return filled;
    FAULTLINE_RETURN_IF_ERROR(progress());
    if (!backlog_.empty()) continue;
    const auto now = Clock::now();
    if (now >= deadline) return size_t{0};
    if (now - start > kSpinBeforeSleep) std::this_thread::sleep_for(kIdleSleep);
  }
}

Status OfiEndpoint::modify_to_error() {
  // libfabric has no QP error state: flush what was never handed to the provider, cancel
  // every posted receive (each completes with FI_ECANCELED, the flush) and refuse later posts.
  errored_ = true;
  for (OpContext* ctx : std::exchange(deferred_, {})) {
    complete_unsubmitted(ctx, CompletionStatus::kWrFlushErr, FI_ECANCELED,
                         "FI_ECANCELED: flushed before it reached the provider");
  }
  for (auto& context : recv_contexts_) {
    if (!context.in_use) continue;
    if (ssize_t rc = fi_cancel(&ep_->fid, &context.fi_ctx); rc != 0) {
      Error error = ofi_call_error("fi_cancel", rc, &device_.info());
      error.where.qp = endpoint_number_;
      return error;
    }
  }
  return {};
}

}  // namespace faultline::transports::ofi
