#pragma once

#include <deque>
#include <vector>

#include "faultline/transports/limits_check.hpp"
#include "verbs_common.hpp"

namespace faultline::transports::verbs {

class VerbsDevice;

/// An RC queue pair with its own CQ. Work requests carry faultline's own sequence numbers as
/// wr_id; the caller's wr_id and opcode live in a ring per queue. Both queues complete in
/// order on RC, so a completion retires every earlier slot of its ring (unsignaled sends
/// included), and an error completion, whose opcode verbs leaves undefined, is still reported
/// with the opcode that was posted. A completion for a sequence number not outstanding is
/// reported as such (a stale completion).
class VerbsEndpoint final : public Endpoint {
 public:
  static Result<std::unique_ptr<VerbsEndpoint>> create(VerbsDevice& device,
                                                       const EndpointConfig& config);
  ~VerbsEndpoint() override;

  std::vector<std::byte> address() const override;
  Status connect(std::span<const std::byte> peer_address) override;
  Status post_send(const WorkRequest& request) override;
  Status post_recv(const RecvRequest& request) override;
  Result<size_t> poll(std::span<Completion> out, std::chrono::milliseconds timeout) override;
  Status modify_to_error() override;
  uint32_t qp_num() const override { return qp_->qp_num; }
  const EndpointConfig& config() const override { return config_; }

 private:
  struct Slot {
    uint64_t wr_id = 0;
    Opcode op = Opcode::kSend;
    uint32_t byte_len = 0;
  };
  /// Posted work requests in posting order; sequence numbers grow without wrapping.
  struct Ring {
    std::vector<Slot> slots;
    uint64_t head = 0;  ///< oldest outstanding sequence number
    uint64_t tail = 0;  ///< next sequence number
    bool full() const { return tail - head == slots.size(); }
    Slot& at(uint64_t sequence) { return slots[sequence % slots.size()]; }
  };

  VerbsEndpoint(VerbsDevice& device, const EndpointConfig& config);
  Error error_here(ErrorCode code, std::string message) const;
  Error call_error(const char* call, int err, std::string message = {}) const;
  /// What a post may use (see check_send), computed once the QP is created.
  PostLimits post_limits() const;
  /// The endpoint's own state first (error state, not connected), then `checked` with this
  /// endpoint's location added to its error.
  Status check_post(Status checked, bool needs_connection) const;
  /// Fills one SGE per segment; returns the bytes they cover.
  static size_t fill_sges(std::span<const Segment> segments, ibv_sge* sges);
  Completion convert(const ibv_wc& wc);
  /// The GID `config` asks for (EndpointConfig::gid), else the device's choice.
  static Result<std::optional<GidEntry>> choose_endpoint_gid(const DeviceInfo& info,
                                                             const EndpointConfig& config);
  /// At connect: the two sides' GIDs of one type and address family.
  Status check_gids_agree(const std::string& peer_gid, const std::string& peer_type) const;
  /// At connect: the path MTU within the port's active MTU and the same as the peer's.
  Status check_path_mtu(uint32_t path_mtu, uint32_t active_mtu, uint32_t peer_path_mtu) const;
  /// The error of a poll once the device reported this endpoint's CQ overran.
  Error overrun_error() const;
  Status modify(ibv_qp_attr& attr, int mask, const char* state);

  VerbsDevice& device_;
  EndpointConfig config_;
  ibv_qp_cap granted_{};
  PostLimits post_limits_;
  std::optional<GidEntry> gid_;  ///< the GID this endpoint's packets carry
  uint32_t psn_ = 0;
  Ring send_ring_;
  Ring recv_ring_;
  bool connected_ = false;
  bool errored_ = false;
  bool overran_ = false;  ///< the device raised IBV_EVENT_CQ_ERR for cq_: every empty poll says so
  std::chrono::steady_clock::time_point next_event_check_{};
  CqPtr cq_;
  QpPtr qp_;  // declared after the CQ: destroyed first
};

}  // namespace faultline::transports::verbs
