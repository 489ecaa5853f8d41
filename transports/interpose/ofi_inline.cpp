#include "ofi_inline.hpp"

#include <rdma/fi_errno.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

#include "process_plan.hpp"

namespace faultline::transports::interpose {

namespace {

using fault::InlineMode;

// The sends posted for injects under `off`: each is its own context, holding its copy.
struct HiddenSend {
  std::vector<std::byte> bytes;
};

std::mutex hidden_mutex;
std::unordered_set<void*> hidden_sends;
std::atomic<size_t> hidden_count{0};  // CQ reads look here before taking the lock

bool changes(InlineMode mode, const InlineEndpoint& endpoint, const SendCall& call) {
  switch (mode) {
    case InlineMode::kOff: return call.inject;
    case InlineMode::kForce:
      return !call.inject && call.len <= endpoint.inject_size && endpoint.transmit_cq != nullptr &&
             !endpoint.selective_completion;
    case InlineMode::kAboveLimit: return !call.inject && call.len > endpoint.inject_size;
    case InlineMode::kNone: return false;
  }
  return false;
}

HiddenSend* keep_hidden(const SendCall& call) {
  const auto* first = static_cast<const std::byte*>(call.buf);
  auto* send = new HiddenSend{std::vector<std::byte>(first, first + call.len)};
  std::lock_guard lock(hidden_mutex);
  hidden_sends.insert(send);
  hidden_count.fetch_add(1, std::memory_order_relaxed);
  return send;
}

// `off`: the inject as a send of a copy, with a completion asked for (the copy is freed then)
// even on an endpoint with selective completion.
ssize_t send_for_inject(fid_ep* ep, const fi_ops_msg* msg, const fi_ops_tagged* tagged,
                        const SendCall& call) {
  HiddenSend* send = keep_hidden(call);
  iovec iov{send->bytes.data(), call.len};
  const uint64_t flags = FI_COMPLETION | (call.data ? FI_REMOTE_CQ_DATA : 0);
  ssize_t posted = 0;
  if (call.tag) {
    const fi_msg_tagged message{.msg_iov = &iov,
                                .desc = nullptr,
                                .iov_count = 1,
                                .addr = call.dest,
                                .tag = *call.tag,
                                .ignore = 0,
                                .context = send,
                                .data = call.data.value_or(0)};
    posted = tagged->sendmsg(ep, &message, flags);
  } else {
    const fi_msg message{.msg_iov = &iov,
                         .desc = nullptr,
                         .iov_count = 1,
                         .addr = call.dest,
                         .context = send,
                         .data = call.data.value_or(0)};
    posted = msg->sendmsg(ep, &message, flags);
  }
  if (posted != 0) hidden_send_completed(send);
  return posted;
}

// `force`: the send as an inject, and the completion the program expects from its send.
ssize_t inject_for_send(fid_ep* ep, const InlineEndpoint& endpoint, const fi_ops_msg* msg,
                        const fi_ops_tagged* tagged, const SendCall& call) {
  ssize_t posted = 0;
  if (call.tag)
    posted = call.data
                 ? tagged->injectdata(ep, call.buf, call.len, *call.data, call.dest, *call.tag)
                 : tagged->inject(ep, call.buf, call.len, call.dest, *call.tag);
  else
    posted = call.data ? msg->injectdata(ep, call.buf, call.len, *call.data, call.dest)
                       : msg->inject(ep, call.buf, call.len, call.dest);
  if (posted != 0) return posted;
  fi_cq_tagged_entry entry{};
  entry.op_context = call.context;
  entry.flags = FI_SEND | (call.tag ? FI_TAGGED : FI_MSG);
  hand_out_completion(endpoint.transmit_cq, entry);
  return 0;
}

}  // namespace

std::optional<ssize_t> post_with_inline_fault(fid_ep* ep, const InlineEndpoint& endpoint,
                                              const Event& event, const fi_ops_msg* msg,
                                              const fi_ops_tagged* tagged, const SendCall& call) {
  auto fired = Plan::get().inline_fault(
      event, [&](InlineMode mode) { return changes(mode, endpoint, call); });
  if (!fired) return std::nullopt;
  nlohmann::json details = {{"call", call.call},
                            {"layer", endpoint.layer},
                            {"bytes", call.len},
                            {"inject_size", endpoint.inject_size}};
  ssize_t posted = -FI_EINVAL;
  if (fired->inline_mode == InlineMode::kAboveLimit) {
    details["posted_as"] = "inject";
    details["hint"] = "an inject above the endpoint's inject_size is refused by the provider";
  } else if (fired->inline_mode == InlineMode::kForce) {
    details["posted_as"] = call.data ? "fi_injectdata" : "fi_inject";
    posted = inject_for_send(ep, endpoint, msg, tagged, call);
  } else if (endpoint.local_registrations) {
    details["posted_as"] = "send";
    details["unregistered"] = true;
    details["hint"] =
        "the domain needs registered memory for sends (FI_MR_LOCAL) and an inject's bytes have "
        "none: only an inject can send them";
  } else {
    details["posted_as"] = "fi_sendmsg";
    posted = send_for_inject(ep, msg, tagged, call);
  }
  details["result"] = posted;
  // -FI_EAGAIN: nothing was posted; the program posts it again, and the fault with it.
  if (posted != -FI_EAGAIN) log_fault(*fired, std::move(details));
  return posted;
}

bool hidden_send_completed(void* context) {
  if (hidden_count.load(std::memory_order_relaxed) == 0) return false;
  {
    std::lock_guard lock(hidden_mutex);
    if (hidden_sends.erase(context) == 0) return false;
    hidden_count.fetch_sub(1, std::memory_order_relaxed);
  }
  delete static_cast<HiddenSend*>(context);
  return true;
}

}  // namespace faultline::transports::interpose
