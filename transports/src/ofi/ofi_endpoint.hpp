#pragma once

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <rdma/fi_rma.h>
#include <sys/uio.h>

#include <array>
#include <deque>
#include <optional>
#include <vector>

#include "faultline/transports/limits_check.hpp"
#include "ofi_common.hpp"

namespace faultline::transports::ofi {

class OfiDevice;

/// An FI_EP_RDM endpoint with its own address vector and completion queue, talking to one
/// peer. Every post carries an OpContext (FI_CONTEXT mode) that maps the libfabric completion
/// back to the caller's wr_id; the context pools are the send and receive queue depths, so a
/// post beyond the depth is refused as a verbs QP would refuse it. A post the provider answers
/// with -FI_EAGAIN (no credits yet, connection still being set up) stays in its context and is
/// retried, in order, each time the endpoint is polled: posting never blocks on the peer.
class OfiEndpoint final : public Endpoint {
 public:
  static Result<std::unique_ptr<OfiEndpoint>> create(OfiDevice& device,
                                                     const EndpointConfig& config);
  ~OfiEndpoint() override;

  std::vector<std::byte> address() const override { return address_; }
  Status connect(std::span<const std::byte> peer_address) override;
  Status post_send(const WorkRequest& request) override;
  Status post_recv(const RecvRequest& request) override;
  Result<size_t> poll(std::span<Completion> out, std::chrono::milliseconds timeout) override;
  Status modify_to_error() override;
  uint32_t qp_num() const override { return endpoint_number_; }
  const EndpointConfig& config() const override { return config_; }

  fid_ep* native() const { return ep_.get(); }

 private:
  static constexpr size_t kMaxSegments = 32;

  struct OpContext {
    fi_context fi_ctx;  // must stay first: libfabric hands back this address
    uint64_t wr_id = 0;
    Opcode op = Opcode::kSend;
    uint32_t byte_len = 0;
    bool signaled = true;
    bool is_recv = false;
    bool in_use = false;
    // The operation as posted, so that a post refused with -FI_EAGAIN can be retried.
    std::array<iovec, kMaxSegments> iov{};
    std::array<void*, kMaxSegments> desc{};
    size_t iov_count = 0;
    fi_rma_iov rma_iov{};
    uint64_t flags = 0;
    uint64_t data = 0;
    std::vector<std::byte> inline_copy;  // inline payloads are the caller's again on return
  };

  OfiEndpoint(OfiDevice& device, const EndpointConfig& config);

  Error error_here(ErrorCode code, std::string message) const;
  Status check_postable() const;
  /// What a post may use (see check_send), computed once at creation.
  PostLimits post_limits() const;
  /// `checked` with this endpoint's location added to its error.
  Status check_post(Status checked) const;
  /// fi_inject* for an unsignaled one-segment inline send: true when done, false when the
  /// post needs a context (not injectable, or no credit now).
  Result<bool> try_inject(const WorkRequest& request);
  static void fill_segments(OpContext& ctx, std::span<const Segment> segments);
  static void copy_inline(OpContext& ctx, std::span<const Segment> segments, size_t bytes);
  Result<OpContext*> acquire(bool is_recv);
  void release(OpContext* context);
  /// Hands the context's operation to libfabric once; returns the call's result.
  ssize_t submit(OpContext& context);
  /// Submits now, or queues behind earlier refused posts; a hard failure releases the context.
  Status submit_or_defer(OpContext* context);
  /// Retries deferred posts in order, then one fi_cq_read; completions go to the backlog.
  /// Completes a post the provider never took, with `status`, into the backlog.
  void complete_unsubmitted(OpContext* ctx, CompletionStatus status, int native, std::string text);
  /// Fails every deferred post with RETRY_EXC_ERR once they were refused for too long.
  void fail_deferred();
  Status progress();
  /// Converts one read (or error) entry; false when it is a suppressed unsignaled success.
  bool convert(const fi_cq_data_entry& entry, Completion& out);
  Completion convert_error(const fi_cq_err_entry& entry);

  OfiDevice& device_;
  EndpointConfig config_;
  PostLimits post_limits_;
  uint32_t endpoint_number_;
  std::vector<OpContext> send_contexts_;
  std::vector<OpContext> recv_contexts_;
  std::vector<OpContext*> free_send_;
  std::vector<OpContext*> free_recv_;
  std::deque<Completion> backlog_;
  std::deque<OpContext*> deferred_;
  /// Since when the oldest deferred post has been refused with -FI_EAGAIN without a break.
  std::optional<std::chrono::steady_clock::time_point> refused_since_;
  std::vector<std::byte> address_;
  fi_addr_t peer_ = FI_ADDR_UNSPEC;
  bool errored_ = false;
  // Declared last so they close first, before the contexts they may still reference.
  FidPtr<fid_cq> cq_;
  FidPtr<fid_av> av_;
  FidPtr<fid_ep> ep_;
  bool enabled_ = false;  ///< fi_enable succeeded: only then is there anything to drain
};

}  // namespace faultline::transports::ofi
