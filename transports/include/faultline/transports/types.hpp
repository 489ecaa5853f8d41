#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/transports/completion_status.hpp"
#include "faultline/transports/limit_table.hpp"

namespace faultline::transports {

/// What a device advertises. A limit the device does not advertise is nullopt, and is not
/// checked before endpoint creation.
struct DeviceLimits {
#define FAULTLINE_LIMIT_FIELD(name, type, interposer) type name{};
  FAULTLINE_DEVICE_LIMITS(FAULTLINE_LIMIT_FIELD)
#undef FAULTLINE_LIMIT_FIELD
};

struct Capabilities {
  bool send_recv = true;
  bool rdma_write = false;
  bool rdma_read = false;
  bool write_with_imm = false;
  bool send_with_imm = false;
  bool inline_send = false;
  bool atomics = false;
  /// True where an incoming write-with-immediate consumes a posted receive (verbs), false
  /// where it arrives without one (libfabric remote CQ data).
  bool write_imm_consumes_recv = false;
  /// True where `modify_to_error` flushes every outstanding work request (verbs QP error
  /// state); libfabric can only cancel posted receives.
  bool flushes_sends_on_error = false;
};

/// What a caller asks of an endpoint. Zero depths mean "the transport's default".
struct EndpointConfig {
  uint32_t send_depth = 128;
  uint32_t recv_depth = 128;
  uint32_t cq_depth = 0;  ///< 0: send_depth + recv_depth
  uint32_t max_send_sge = 1;
  uint32_t max_recv_sge = 1;
  uint32_t max_inline = 0;
  uint8_t rnr_retry = 7;
  /// 6, not 7: the kernel's rxe takes a retry_cnt of 7 as "retry forever" (measured: a gone
  /// peer left no completion in 110 s), so it never ends in RETRY_EXC_ERR there; 6 ends it on
  /// rxe and hardware alike, within about 7 ACK timeouts.
  uint8_t retry_count = 6;
  uint8_t timeout = 14;        ///< verbs local ACK timeout exponent
  uint8_t min_rnr_timer = 12;  ///< verbs RNR NAK timer code
  /// verbs (RoCE): the GID this endpoint uses: "" the device's choice, "link_local", "roce_v1",
  /// or an index of the port's GID table.
  std::string gid;
  /// verbs: the path MTU in bytes (256 to 4096); 0 takes the smaller active MTU of both sides.
  uint32_t path_mtu = 0;
  /// Skip faultline's limit check and call the native create anyway, to observe what the
  /// device itself does; the limit violation is still reported beside the native error.
  /// At connect, skip the GID and path-MTU agreement checks and let the device decide.
  bool raw = false;
  /// How a value was derived, per field name, shown in limit errors:
  /// {"send_depth": "3 x max_tokens_per_rank 65536 + 1"}.
  std::map<std::string, std::string> derivations;

  uint32_t effective_cq_depth() const { return cq_depth != 0 ? cq_depth : send_depth + recv_depth; }
};

enum class Opcode {
  kSend,
  kSendWithImm,
  kRdmaWrite,
  kRdmaWriteWithImm,
  kRdmaRead,
  kRecv,             ///< a posted receive matched an incoming send
  kRecvRdmaWithImm,  ///< an incoming write-with-immediate
};

/// Every value of Opcode, in declaration order.
inline constexpr Opcode kAllOpcodes[] = {
    Opcode::kSend,     Opcode::kSendWithImm, Opcode::kRdmaWrite,      Opcode::kRdmaWriteWithImm,
    Opcode::kRdmaRead, Opcode::kRecv,        Opcode::kRecvRdmaWithImm};

std::string_view to_string(Opcode op);
std::optional<Opcode> opcode_from_string(std::string_view name);
/// True for the opcodes posted with post_send (send, write, read, with or without immediate).
bool is_send_side(Opcode op);

/// Access rights of a memory registration.
enum AccessFlags : uint32_t {
  kAccessLocalWrite = 1U << 0,
  kAccessRemoteWrite = 1U << 1,
  kAccessRemoteRead = 1U << 2,
  kAccessAll = kAccessLocalWrite | kAccessRemoteWrite | kAccessRemoteRead,
};

/// What a peer needs to target a registered buffer with RDMA. `addr` is what goes on the
/// wire: a virtual address, or an offset where the provider uses offset-based addressing.
struct RemoteBuffer {
  uint64_t addr = 0;
  uint64_t key = 0;
  uint64_t length = 0;
};

class MemoryRegion;

/// One scatter/gather element. `region` must cover [addr, addr + length).
struct Segment {
  void* addr = nullptr;
  uint32_t length = 0;
  const MemoryRegion* region = nullptr;
};

/// A send-side work request. `segments` must stay valid for the duration of the post call
/// only (the data itself until completion, unless `inline_data`).
struct WorkRequest {
  uint64_t wr_id = 0;
  Opcode op = Opcode::kSend;
  std::span<const Segment> segments;
  bool inline_data = false;
  bool signaled = true;
  std::optional<uint32_t> imm;
  RemoteBuffer remote;  ///< target of kRdmaWrite, kRdmaWriteWithImm, kRdmaRead
};

struct RecvRequest {
  uint64_t wr_id = 0;
  std::span<const Segment> segments;
};

/// One work completion. The generic status and the native code are both kept.
struct Completion {
  uint64_t wr_id = 0;
  CompletionStatus status = CompletionStatus::kSuccess;
  Opcode op = Opcode::kSend;
  uint32_t byte_len = 0;
  std::optional<uint32_t> imm;
  uint32_t qp_num = 0;
  int32_t native_status = 0;  ///< ibv_wc.status, or the libfabric error (positive FI_E* value)
  int32_t vendor_err = 0;     ///< ibv_wc.vendor_err, or libfabric prov_errno
  std::string native_text;    ///< the native status text, when there is one

  bool ok() const { return status == CompletionStatus::kSuccess; }
  /// "qp 0x12 wr_id 0x10001 op RDMA_WRITE status WR_FLUSH_ERR (native 5) vendor_err 0x0"
  std::string describe() const;
};

}  // namespace faultline::transports
