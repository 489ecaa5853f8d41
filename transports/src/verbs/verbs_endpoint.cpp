#include "verbs_endpoint.hpp"

#include <endian.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <thread>

#include "faultline/transports/limits_check.hpp"
#include "faultline/transports/verbs/verbs_status_map.hpp"
#include "verbs_device.hpp"
#include "verbs_device_query.hpp"

namespace faultline::transports::verbs {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxSegments = 64;
// Receive sequence numbers carry this bit, so a completion names its queue even when its
// opcode is undefined (error completions).
constexpr uint64_t kRecvBit = 1ULL << 63;
constexpr auto kSpinBeforeSleep = std::chrono::milliseconds(1);
constexpr auto kIdleSleep = std::chrono::microseconds(50);
// How often an empty poll also reads the device's asynchronous events (a CQ overrun).
constexpr auto kEventCheckInterval = std::chrono::milliseconds(1);
constexpr auto kTeardownDrain = std::chrono::milliseconds(500);

uint32_t random_psn() {
  std::random_device random;
  return random() & 0xffffff;
}

ibv_wr_opcode native_opcode(Opcode op) {
  switch (op) {
    case Opcode::kSend: return IBV_WR_SEND;
    case Opcode::kSendWithImm: return IBV_WR_SEND_WITH_IMM;
    case Opcode::kRdmaWrite: return IBV_WR_RDMA_WRITE;
    case Opcode::kRdmaWriteWithImm: return IBV_WR_RDMA_WRITE_WITH_IMM;
    case Opcode::kRdmaRead: return IBV_WR_RDMA_READ;
    case Opcode::kRecv:
    case Opcode::kRecvRdmaWithImm: break;
  }
  return IBV_WR_SEND;
}

}  // namespace

VerbsEndpoint::VerbsEndpoint(VerbsDevice& device, const EndpointConfig& config)
    : device_(device), config_(config), psn_(random_psn()) {}

Error VerbsEndpoint::error_here(ErrorCode code, std::string message) const {
  const DeviceInfo& info = device_.info();
  Error error{code, std::move(message)};
  error.where = {"verbs", info.native_provider, info.name, info.port,
                 qp_ ? std::optional<uint32_t>(qp_->qp_num) : std::nullopt};
  return error;
}

Error VerbsEndpoint::call_error(const char* call, int err, std::string message) const {
  return verbs_call_error(call, err, device_.info(),
                          qp_ ? std::optional<uint32_t>(qp_->qp_num) : std::nullopt,
                          std::move(message));
}

Result<std::unique_ptr<VerbsEndpoint>> VerbsEndpoint::create(VerbsDevice& device,
                                                             const EndpointConfig& config) {
  const DeviceInfo& info = device.info();
  Status limits = check_endpoint_config(config, info.limits);
  if (!limits.ok() && !config.raw) {
    Error error = std::move(limits).take_error();
    error.where = {"verbs", info.native_provider, info.name, info.port, std::nullopt};
    return error;
  }
  auto beyond_limits = [&](Error error) {
    if (!limits.ok()) {
      error.message = "requested beyond the advertised limits: " + limits.error().message;
      error.hint = limits.error().hint;
    }
    return error;
  };

  std::unique_ptr<VerbsEndpoint> endpoint(new VerbsEndpoint(device, config));
  auto gid = choose_endpoint_gid(info, config);
  if (!gid.ok()) return std::move(gid).take_error();
  endpoint->gid_ = gid.value();
  const auto cq_depth = static_cast<int>(config.effective_cq_depth());
  endpoint->cq_.reset(ibv_create_cq(device.context(), cq_depth, nullptr, nullptr, 0));
  if (!endpoint->cq_) {
    return beyond_limits(verbs_call_error("ibv_create_cq", errno, info, std::nullopt,
                                          "cq_depth " + std::to_string(cq_depth)));
  }

  ibv_qp_init_attr attr{};
  attr.send_cq = endpoint->cq_.get();
  attr.recv_cq = endpoint->cq_.get();
  attr.qp_type = IBV_QPT_RC;
  attr.sq_sig_all = 0;
  attr.cap.max_send_wr = config.send_depth;
  attr.cap.max_recv_wr = config.recv_depth;
  attr.cap.max_send_sge = config.max_send_sge;
  attr.cap.max_recv_sge = config.max_recv_sge;
  attr.cap.max_inline_data = config.max_inline;
  endpoint->qp_.reset(ibv_create_qp(device.pd(), &attr));
  if (!endpoint->qp_) {
    return beyond_limits(verbs_call_error("ibv_create_qp", errno, info, std::nullopt,
                                          "send_depth " + std::to_string(config.send_depth) +
                                              ", recv_depth " + std::to_string(config.recv_depth) +
                                              ", sge " + std::to_string(config.max_send_sge) + "/" +
                                              std::to_string(config.max_recv_sge) + ", inline " +
                                              std::to_string(config.max_inline)));
  }
  endpoint->granted_ = attr.cap;
  endpoint->post_limits_ = endpoint->post_limits();
  endpoint->send_ring_.slots.resize(std::max<uint32_t>(attr.cap.max_send_wr, 1));
  endpoint->recv_ring_.slots.resize(std::max<uint32_t>(attr.cap.max_recv_wr, 1));

  ibv_qp_attr init{};
  init.qp_state = IBV_QPS_INIT;
  init.pkey_index = 0;
  init.port_num = static_cast<uint8_t>(info.port);
  init.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  FAULTLINE_RETURN_IF_ERROR(endpoint->modify(
      init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT"));
  return endpoint;
}

VerbsEndpoint::~VerbsEndpoint() {
  if (cq_) (void)device_.cq_overran(cq_.get());  // an unclaimed event must not outlive the CQ
  if (!qp_) return;
  // Flush everything outstanding and drain the CQ before the QP and CQ go away, so no
  // completion outlives them (SPDK PR #3859: destroy before drain).
  if (!errored_) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(qp_.get(), &attr, IBV_QP_STATE);
  }
  const auto deadline = Clock::now() + kTeardownDrain;
  std::array<ibv_wc, 16> wcs{};
  while (Clock::now() < deadline) {
    const int polled = ibv_poll_cq(cq_.get(), static_cast<int>(wcs.size()), wcs.data());
    if (polled < 0) break;
    if (polled == 0) {
      if (send_ring_.head == send_ring_.tail && recv_ring_.head == recv_ring_.tail) break;
      std::this_thread::sleep_for(kIdleSleep);
    }
    for (int i = 0; i < polled; ++i) convert(wcs[static_cast<size_t>(i)]);
  }
}

Status VerbsEndpoint::modify(ibv_qp_attr& attr, int mask, const char* state) {
  if (int rc = ibv_modify_qp(qp_.get(), &attr, mask); rc != 0) {
    return call_error("ibv_modify_qp", rc, std::string("to ") + state);
  }
  return {};
}

std::vector<std::byte> VerbsEndpoint::address() const {
  const DeviceInfo& info = device_.info();
  ibv_port_attr port{};
  ibv_query_port(device_.context(), static_cast<uint8_t>(info.port), &port);
  nlohmann::json blob = {{"qpn", qp_->qp_num},
                         {"psn", psn_},
                         {"lid", port.lid},
                         {"gid_index", gid_ ? gid_->index : 0},
                         {"gid", gid_ ? gid_->gid : ""},
                         {"gid_type", gid_ ? gid_->type : ""},
                         {"mtu", info.limits.active_mtu.value_or(1024)},
                         {"path_mtu", config_.path_mtu}};
  const std::string text = blob.dump();
  const auto* bytes = reinterpret_cast<const std::byte*>(text.data());
  return {bytes, bytes + text.size()};
}

Status VerbsEndpoint::connect(std::span<const std::byte> peer_address) {
  const DeviceInfo& info = device_.info();
  uint32_t peer_qpn = 0;
  uint32_t peer_psn = 0;
  uint16_t peer_lid = 0;
  uint32_t peer_mtu = 0;
  uint32_t peer_path_mtu = 0;
  std::string peer_gid_text;
  std::string peer_gid_type;
  try {
    const auto blob = nlohmann::json::parse(
        std::string(reinterpret_cast<const char*>(peer_address.data()), peer_address.size()));
    blob.at("qpn").get_to(peer_qpn);
    blob.at("psn").get_to(peer_psn);
    blob.at("lid").get_to(peer_lid);
    blob.at("mtu").get_to(peer_mtu);
    blob.at("gid").get_to(peer_gid_text);
    peer_gid_type = blob.value("gid_type", "");
    peer_path_mtu = blob.value("path_mtu", 0U);
  } catch (const nlohmann::json::exception& e) {
    return error_here(ErrorCode::kInvalidArgument,
                      std::string("the peer address is not a verbs endpoint address: ") + e.what());
  }
  ibv_gid peer_gid{};
  const bool global = !peer_gid_text.empty();
  if (global && !gid_from_string(peer_gid_text, peer_gid)) {
    return error_here(ErrorCode::kInvalidArgument,
                      "the peer GID '" + peer_gid_text + "' is not a GID");
  }
  if (!global && info.link_layer == "Ethernet") {
    return error_here(ErrorCode::kInvalidArgument, "the peer has no GID; RoCE needs one")
        .with_hint("check the peer's GID table (faultline devices --transport verbs)");
  }

  if (!config_.raw && global && gid_) {
    FAULTLINE_RETURN_IF_ERROR(check_gids_agree(peer_gid_text, peer_gid_type));
  }
  // Path MTU: as asked, else the smaller active MTU of the two sides.
  const uint32_t own_mtu = info.limits.active_mtu.value_or(1024);
  const uint32_t negotiated = std::min(own_mtu, peer_mtu);
  const uint32_t path_mtu = config_.path_mtu != 0 ? config_.path_mtu : negotiated;
  if (!config_.raw) {
    FAULTLINE_RETURN_IF_ERROR(
        check_path_mtu(path_mtu, own_mtu, peer_path_mtu != 0 ? peer_path_mtu : negotiated));
  }
  ibv_qp_attr rtr{};
  rtr.qp_state = IBV_QPS_RTR;
  rtr.path_mtu = mtu_from_bytes(path_mtu);
  rtr.dest_qp_num = peer_qpn;
  rtr.rq_psn = peer_psn;
  rtr.max_dest_rd_atomic = 1;
  rtr.min_rnr_timer = config_.min_rnr_timer;
  rtr.ah_attr.dlid = peer_lid;
  rtr.ah_attr.sl = 0;
  rtr.ah_attr.port_num = static_cast<uint8_t>(info.port);
  if (global) {
    rtr.ah_attr.is_global = 1;
    rtr.ah_attr.grh.dgid = peer_gid;
    rtr.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_ ? gid_->index : 0);
    rtr.ah_attr.grh.hop_limit = 64;
  }
  FAULTLINE_RETURN_IF_ERROR(modify(rtr,
                                   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                                       IBV_QP_MIN_RNR_TIMER,
                                   "RTR"));
  ibv_qp_attr rts{};
  rts.qp_state = IBV_QPS_RTS;
  rts.timeout = config_.timeout;
  rts.retry_cnt = config_.retry_count;
  rts.rnr_retry = config_.rnr_retry;
  rts.sq_psn = psn_;
  rts.max_rd_atomic = 1;
  FAULTLINE_RETURN_IF_ERROR(modify(rts,
                                   IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                       IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
                                   "RTS"));
  connected_ = true;
  return {};
}

Result<std::optional<GidEntry>> VerbsEndpoint::choose_endpoint_gid(const DeviceInfo& info,
                                                                   const EndpointConfig& config) {
  std::optional<uint32_t> index = info.gid_index;
  if (!config.gid.empty()) {
    std::string why;
    index = find_gid(info.gids, config.gid, why);
    if (!index) {
      Error error{ErrorCode::kNotFound,
                  info.name + " port " + std::to_string(info.port) + ": " + why};
      error.where = {"verbs", info.native_provider, info.name, info.port, std::nullopt};
      return std::move(error).with_hint(
          "`faultline devices --transport verbs --json` lists the GID table");
    }
  }
  for (const auto& entry : info.gids) {
    if (index && entry.index == *index) return std::optional<GidEntry>(entry);
  }
  return std::optional<GidEntry>();
}

Status VerbsEndpoint::check_gids_agree(const std::string& peer_gid,
                                       const std::string& peer_type) const {
  const std::string own_family = gid_family(gid_->gid);
  const std::string peer_family = gid_family(peer_gid);
  const bool types_differ = !peer_type.empty() && peer_type != gid_->type;
  const bool families_differ = (own_family == "IPv4") != (peer_family == "IPv4");
  if (!types_differ && !families_differ) return {};
  return error_here(ErrorCode::kInvalidArgument,
                    "GID mismatch: this side uses gid " + std::to_string(gid_->index) + " " +
                        gid_->gid + " (" + gid_->type + ", " + own_family + "), the peer " +
                        peer_gid + " (" + (peer_type.empty() ? "type unknown" : peer_type) + ", " +
                        peer_family + "): " +
                        (types_differ ? "RoCE v1 and v2 packets do not reach each other"
                                      : "an IPv4 and an IPv6 address do not route to each other") +
                        "; caught before any traffic")
      .with_hint(
          "both sides must use the same GID type and address family (NCCL_IB_GID_INDEX, "
          "UCX_IB_GID_INDEX); a wrong index shows up later as RETRY_EXC_ERR (NCCL #426)");
}

Status VerbsEndpoint::check_path_mtu(uint32_t path_mtu, uint32_t active_mtu,
                                     uint32_t peer_path_mtu) const {
  if (path_mtu > active_mtu) {
    return error_here(ErrorCode::kInvalidArgument,
                      "path_mtu " + std::to_string(path_mtu) + " is above the active MTU " +
                          std::to_string(active_mtu) + " of this port; caught before any traffic")
        .with_hint(
            "the active MTU follows the netdev's MTU (1500 gives 1024); lower path_mtu "
            "or raise the interface MTU on both sides");
  }
  if (path_mtu != peer_path_mtu) {
    return error_here(ErrorCode::kInvalidArgument,
                      "path MTU mismatch: this side " + std::to_string(path_mtu) + ", the peer " +
                          std::to_string(peer_path_mtu) + "; caught before any traffic")
        .with_hint(
            "both sides of a QP must use the same path MTU: take the smaller active MTU "
            "of the two (ibv_query_port) rather than a fixed value");
  }
  return {};
}

PostLimits VerbsEndpoint::post_limits() const {
  const DeviceLimits& limits = device_.info().limits;
  // A driver may report more inline than the endpoint asked for (rxe grants its maximum
  // when asked for 0); code relying on that breaks on the next NIC, so the request counts.
  return {.max_send_sge = granted_.max_send_sge,
          .max_recv_sge = granted_.max_recv_sge,
          .max_sge_rd = limits.max_sge_rd,
          .max_segments = kMaxSegments,
          .max_inline = std::min(config_.max_inline, granted_.max_inline_data),
          .asked_inline = config_.max_inline,
          .driver_inline = granted_.max_inline_data,
          .device_inline = limits.max_inline_data,
          .max_msg_size = limits.max_msg_size,
          .immediate_data = true};
}

Status VerbsEndpoint::check_post(Status checked, bool needs_connection) const {
  if (errored_) {
    return error_here(ErrorCode::kInvalidArgument,
                      "post on an endpoint in the error state (after modify_to_error)");
  }
  if (needs_connection && !connected_) {
    return error_here(ErrorCode::kInvalidArgument, "post before connect");
  }
  if (checked.ok()) return checked;
  Error error = std::move(checked).take_error();
  error.where = error_here(error.code, "").where;
  return error;
}

size_t VerbsEndpoint::fill_sges(std::span<const Segment> segments, ibv_sge* sges) {
  size_t bytes = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& segment = segments[i];
    const auto* region = static_cast<const VerbsMemoryRegion*>(segment.region);
    sges[i] = {reinterpret_cast<uintptr_t>(segment.addr), segment.length,
               region != nullptr ? region->lkey() : 0};
    bytes += segment.length;
  }
  return bytes;
}

Status VerbsEndpoint::post_send(const WorkRequest& request) {
  FAULTLINE_RETURN_IF_ERROR(check_post(check_send(request, post_limits_), true));
  if (send_ring_.full()) {
    return error_here(ErrorCode::kLimitExceeded,
                      "send queue full: " + std::to_string(send_ring_.slots.size()) +
                          " work requests outstanding (send_depth)");
  }
  // Only the entries in use are filled (and read): no zeroing of all kMaxSegments per post.
  std::array<ibv_sge, kMaxSegments> sges;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  const size_t bytes = fill_sges(request.segments, sges.data());
  ibv_send_wr wr{};
  wr.wr_id = send_ring_.tail;
  wr.sg_list = sges.data();
  wr.num_sge = static_cast<int>(request.segments.size());
  wr.opcode = native_opcode(request.op);
  wr.send_flags = 0;
  if (request.signaled) wr.send_flags |= IBV_SEND_SIGNALED;
  if (request.inline_data) wr.send_flags |= IBV_SEND_INLINE;
  if (request.imm) wr.imm_data = htobe32(*request.imm);
  wr.wr.rdma.remote_addr = request.remote.addr;
  wr.wr.rdma.rkey = static_cast<uint32_t>(request.remote.key);
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_.get(), &wr, &bad); rc != 0) {
    return call_error(
        "ibv_post_send", rc,
        std::string(to_string(request.op)) + " wr_id " + std::to_string(request.wr_id));
  }
  send_ring_.at(send_ring_.tail++) = {request.wr_id, request.op, static_cast<uint32_t>(bytes)};
  return {};
}

Status VerbsEndpoint::post_recv(const RecvRequest& request) {
  FAULTLINE_RETURN_IF_ERROR(check_post(check_recv(request, post_limits_), false));
  if (recv_ring_.full()) {
    return error_here(ErrorCode::kLimitExceeded,
                      "receive queue full: " + std::to_string(recv_ring_.slots.size()) +
                          " work requests outstanding (recv_depth)");
  }
  // Only the entries in use are filled (and read): no zeroing of all kMaxSegments per post.
  std::array<ibv_sge, kMaxSegments> sges;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  fill_sges(request.segments, sges.data());
  ibv_recv_wr wr{};
  wr.wr_id = recv_ring_.tail | kRecvBit;
  wr.sg_list = sges.data();
  wr.num_sge = static_cast<int>(request.segments.size());
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qp_.get(), &wr, &bad); rc != 0) {
    return call_error("ibv_post_recv", rc, "wr_id " + std::to_string(request.wr_id));
  }
  recv_ring_.at(recv_ring_.tail++) = {request.wr_id, Opcode::kRecv, 0};
  return {};
}

Completion VerbsEndpoint::convert(const ibv_wc& wc) {
  Completion out;
  out.qp_num = wc.qp_num;
  out.status = completion_status_from_ibv(wc.status);
  out.native_status = static_cast<int32_t>(wc.status);
  out.vendor_err = static_cast<int32_t>(wc.vendor_err);
  out.native_text = ibv_wc_status_str(wc.status);
  if ((wc.wc_flags & IBV_WC_WITH_IMM) != 0) out.imm = be32toh(wc.imm_data);

  const bool is_recv = (wc.wr_id & kRecvBit) != 0;
  Ring& ring = is_recv ? recv_ring_ : send_ring_;
  const uint64_t sequence = wc.wr_id & ~kRecvBit;
  if (sequence < ring.head || sequence >= ring.tail) {
    out.wr_id = wc.wr_id;
    out.op = is_recv ? Opcode::kRecv : Opcode::kSend;
    out.native_text += "; completion for a work request that is not outstanding (stale)";
    return out;
  }
  const Slot slot = ring.at(sequence);
  ring.head = sequence + 1;  // RC queues complete in order: earlier slots are done too
  out.wr_id = slot.wr_id;
  if (is_recv) {
    out.op = (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM)
                 ? Opcode::kRecvRdmaWithImm
                 : Opcode::kRecv;
    out.byte_len = wc.byte_len;
  } else {
    out.op = slot.op;
    out.byte_len = slot.byte_len;
  }
  return out;
}

Result<size_t> VerbsEndpoint::poll(std::span<Completion> out, std::chrono::milliseconds timeout) {
  std::optional<Clock::time_point> start;  // read only once a poll came back empty
  std::array<ibv_wc, 16> wcs;              // NOLINT(cppcoreguidelines-pro-type-member-init)
  for (;;) {
    const int batch = static_cast<int>(std::min(out.size(), wcs.size()));
    if (batch == 0) return size_t{0};
    const int polled = ibv_poll_cq(cq_.get(), batch, wcs.data());
    if (polled < 0) {
      return error_here(ErrorCode::kNativeError,
                        "ibv_poll_cq returned " + std::to_string(polled) +
                            ": the CQ is in error (overrun?); completions may be lost")
          .with_hint("a CQ smaller than the work in flight overruns; raise cq_depth");
    }
    for (int i = 0; i < polled; ++i)
      out[static_cast<size_t>(i)] = convert(wcs[static_cast<size_t>(i)]);
    if (polled > 0) return static_cast<size_t>(polled);
    const auto now = Clock::now();
    if (overran_ || now >= next_event_check_) {
      next_event_check_ = now + kEventCheckInterval;
      if (overran_ || device_.cq_overran(cq_.get())) {
        overran_ = true;
        return overrun_error();
      }
    }
    if (timeout.count() == 0) return size_t{0};  // a spinning caller
    if (!start) start = now;
    if (now >= *start + timeout) return size_t{0};
    if (now - *start > kSpinBeforeSleep) std::this_thread::sleep_for(kIdleSleep);
  }
}

Error VerbsEndpoint::overrun_error() const {
  const uint64_t outstanding =
      (send_ring_.tail - send_ring_.head) + (recv_ring_.tail - recv_ring_.head);
  return call_error("ibv_get_async_event", 0,
                    "IBV_EVENT_CQ_ERR: the CQ overran (cq_depth " +
                        std::to_string(config_.effective_cq_depth()) + ", " +
                        std::to_string(cq_->cqe) + " entries as created); completions past " +
                        "its capacity are lost: " + std::to_string(outstanding) +
                        " posted work requests never completed")
      .with_hint("a CQ smaller than the work in flight overruns (send_depth " +
                 std::to_string(config_.send_depth) + " + recv_depth " +
                 std::to_string(config_.recv_depth) + "); raise cq_depth, or poll sooner");
}

Status VerbsEndpoint::modify_to_error() {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  FAULTLINE_RETURN_IF_ERROR(modify(attr, IBV_QP_STATE, "ERR"));
  errored_ = true;
  return {};
}

}  // namespace faultline::transports::verbs
