#pragma once

#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "process_plan.hpp"

namespace faultline::transports::interpose {

/// What the inline family needs to know of one endpoint.
struct InlineEndpoint {
  const char* layer = "";
  size_t inject_size = 0;            ///< tx_attr->inject_size of the info it was opened with
  bool local_registrations = false;  ///< FI_MR_LOCAL: every send buffer needs a descriptor
  fid_cq* transmit_cq = nullptr;     ///< the CQ bound with FI_TRANSMIT
  bool selective_completion = false;
};

/// One send or inject, as the program called it.
struct SendCall {
  const char* call = "";  ///< "fi_inject", "fi_tsenddata", ...
  bool inject = false;
  const void* buf = nullptr;
  size_t len = 0;
  void* desc = nullptr;
  fi_addr_t dest = 0;
  void* context = nullptr;
  std::optional<uint64_t> data;  ///< the *data variants
  std::optional<uint64_t> tag;   ///< the tagged calls
};

/// The plan's inline fault for one send or inject of `ep` (`event`: the post as the plan sees
/// it; `msg`, `tagged`: the provider's tables), applied and logged; the post's result, or nullopt
/// when no fault changes it:
/// - `off`: an inject goes out as an ordinary send from a copy of its bytes, its completion
///   hidden from the program (an inject has none; hidden_send_completed). On a domain whose
///   sends need registered memory (FI_MR_LOCAL) the copy has none: the post fails with
///   -FI_EINVAL, as a program relying on inject for unregistered memory would see.
/// - `force`: a send within the endpoint's inject_size is injected, and the program gets the
///   completion its send would have had (not on an endpoint with selective completion: whether
///   the send asked for one is the provider's to know).
/// - `above_limit`: a send above inject_size, posted as an inject, is refused with -FI_EINVAL.
std::optional<ssize_t> post_with_inline_fault(fid_ep* ep, const InlineEndpoint& endpoint,
                                              const Event& event, const fi_ops_msg* msg,
                                              const fi_ops_tagged* tagged, const SendCall& call);

/// True when `context` is a send posted for an inject under `off`: the entry is the hook's, not
/// the program's; its copy is freed.
bool hidden_send_completed(void* context);

/// Hands the program a completion on `cq` on its next read (a wrapped CQ; false when not).
bool hand_out_completion(fid_cq* cq, const fi_cq_tagged_entry& entry);

}  // namespace faultline::transports::interpose
