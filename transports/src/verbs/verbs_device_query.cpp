#include "verbs_device_query.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

namespace faultline::transports::verbs {

namespace {

// Inline sizes above this are not probed; no NIC here comes close.
constexpr uint32_t kInlineProbeCeiling = 8192;

bool qp_works(ibv_context* context, ibv_pd* pd, ibv_qp_type type, uint32_t inline_bytes) {
  CqPtr cq{ibv_create_cq(context, 2, nullptr, nullptr, 0)};
  if (!cq) return false;
  ibv_qp_init_attr attr{};
  attr.send_cq = cq.get();
  attr.recv_cq = cq.get();
  attr.qp_type = type;
  attr.cap.max_send_wr = 1;
  attr.cap.max_recv_wr = 1;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = inline_bytes;
  QpPtr qp{ibv_create_qp(pd, &attr)};
  return qp != nullptr;
}

// The largest inline size for which ibv_create_qp succeeds, by bisection.
uint32_t probe_max_inline(ibv_context* context, ibv_pd* pd) {
  if (!qp_works(context, pd, IBV_QPT_RC, 0)) return 0;
  uint32_t works = 0;
  uint32_t fails = kInlineProbeCeiling + 1;
  if (qp_works(context, pd, IBV_QPT_RC, kInlineProbeCeiling)) return kInlineProbeCeiling;
  while (fails - works > 1) {
    const uint32_t middle = works + (fails - works) / 2;
    (qp_works(context, pd, IBV_QPT_RC, middle) ? works : fails) = middle;
  }
  return works;
}

std::string gid_type_name(ibv_gid_type type) {
  switch (type) {
    case IBV_GID_TYPE_IB: return "IB";
    case IBV_GID_TYPE_ROCE_V1: return "RoCE v1";
    case IBV_GID_TYPE_ROCE_V2: return "RoCE v2";
  }
  return "unknown";
}

// What the port speaks: iWARP by the device's transport, InfiniBand by the link layer, RoCE
// v1 and v2 by the GID types the port holds (the kernel adds a GID of each type it speaks).
std::vector<std::string> wire_protocols(ibv_transport_type transport, bool ethernet,
                                        const std::vector<GidEntry>& gids) {
  if (transport == IBV_TRANSPORT_IWARP) return {"iWARP"};
  if (!ethernet) return {"InfiniBand"};
  std::vector<std::string> protocols;
  for (const GidEntry& gid : gids)
    if ((gid.type == "RoCE v1" || gid.type == "RoCE v2") &&
        std::find(protocols.begin(), protocols.end(), gid.type) == protocols.end())
      protocols.push_back(gid.type);
  std::sort(protocols.begin(), protocols.end());
  return protocols;
}

std::string port_state_name(ibv_port_state state) {
  switch (state) {
    case IBV_PORT_NOP: return "nop";
    case IBV_PORT_DOWN: return "down";
    case IBV_PORT_INIT: return "init";
    case IBV_PORT_ARMED: return "armed";
    case IBV_PORT_ACTIVE: return "active";
    case IBV_PORT_ACTIVE_DEFER: return "active_defer";
  }
  return "unknown";
}

// The kernel driver behind a device, from sysfs; software devices have no driver link.
std::string driver_of(const std::string& device) {
  std::error_code error;
  const auto link =
      std::filesystem::read_symlink("/sys/class/infiniband/" + device + "/device/driver", error);
  if (!error) return link.filename().string();
  if (device.rfind("rxe", 0) == 0) return "rdma_rxe";
  if (device.rfind("siw", 0) == 0) return "siw";
  return "unknown";
}

}  // namespace

std::map<std::string, bool> probe_qp_types(ibv_context* context, ibv_pd* pd) {
  return {{"RC", qp_works(context, pd, IBV_QPT_RC, 0)},
          {"UC", qp_works(context, pd, IBV_QPT_UC, 0)},
          {"UD", qp_works(context, pd, IBV_QPT_UD, 0)}};
}

Result<DeviceInfo> query_port(ibv_context* context, ibv_pd* pd, uint32_t port) {
  DeviceInfo info;
  info.transport = "verbs";
  info.name = ibv_get_device_name(context->device);
  info.native_provider = driver_of(info.name);
  info.port = port;

  ibv_device_attr attr{};
  if (int rc = ibv_query_device(context, &attr); rc != 0) {
    return verbs_call_error("ibv_query_device", rc, info);
  }
  ibv_port_attr port_attr{};
  if (int rc = ibv_query_port(context, static_cast<uint8_t>(port), &port_attr); rc != 0) {
    return verbs_call_error("ibv_query_port", rc, info);
  }
  info.firmware = attr.fw_ver;
  info.vendor_id = attr.vendor_id;
  info.vendor_part_id = attr.vendor_part_id;
  char guid[32];
  std::snprintf(guid, sizeof guid, "%016llx",
                static_cast<unsigned long long>(be64toh(attr.node_guid)));
  info.fabric = guid;
  info.state = port_state_name(port_attr.state);
  const bool ethernet = port_attr.link_layer == IBV_LINK_LAYER_ETHERNET;
  info.link_layer = ethernet ? "Ethernet" : "InfiniBand";
  info.provider = ethernet ? "roce" : "ib";

  DeviceLimits& limits = info.limits;
  limits.max_qp_wr = static_cast<uint32_t>(attr.max_qp_wr);
  limits.max_recv_wr = static_cast<uint32_t>(attr.max_qp_wr);
  limits.max_cqe = static_cast<uint32_t>(attr.max_cqe);
  limits.max_send_sge = static_cast<uint32_t>(attr.max_sge);
  limits.max_recv_sge = static_cast<uint32_t>(attr.max_sge);
  limits.max_sge_rd = static_cast<uint32_t>(attr.max_sge_rd);
  limits.max_inline_data = probe_max_inline(context, pd);
  limits.max_msg_size = port_attr.max_msg_sz;
  limits.max_mr_size = attr.max_mr_size;
  limits.active_mtu = mtu_bytes(port_attr.active_mtu);
  limits.max_mtu = mtu_bytes(port_attr.max_mtu);
  limits.max_qp = static_cast<uint32_t>(attr.max_qp);
  limits.max_cq = static_cast<uint32_t>(attr.max_cq);
  limits.max_mr = static_cast<uint32_t>(attr.max_mr);
  limits.max_pd = static_cast<uint32_t>(attr.max_pd);
  limits.max_srq = static_cast<uint32_t>(attr.max_srq);

  Capabilities& caps = info.capabilities;
  caps.send_recv = true;
  caps.rdma_write = true;
  caps.rdma_read = true;
  caps.write_with_imm = true;
  caps.send_with_imm = true;
  caps.inline_send = limits.max_inline_data > 0;
  caps.atomics = false;  // the Transport interface has no atomic operations yet
  caps.write_imm_consumes_recv = true;
  caps.flushes_sends_on_error = true;

  for (int index = 0; index < port_attr.gid_tbl_len; ++index) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(context, port, static_cast<uint32_t>(index), &entry, 0) != 0) continue;
    info.gids.push_back({static_cast<uint32_t>(index), gid_to_string(entry.gid),
                         gid_type_name(static_cast<ibv_gid_type>(entry.gid_type))});
  }
  info.wire_protocols = wire_protocols(context->device->transport_type, ethernet, info.gids);
  return info;
}

std::optional<uint32_t> choose_gid(const std::vector<GidEntry>& gids, std::string& why) {
  auto first = [&](auto&& predicate) -> const GidEntry* {
    for (const auto& gid : gids) {
      if (predicate(gid)) return &gid;
    }
    return nullptr;
  };
  const GidEntry* chosen = nullptr;
  if ((chosen = first([](const GidEntry& g) {
         return g.type == "RoCE v2" && g.gid.rfind("::ffff:", 0) == 0;
       }))) {
    why = "RoCE v2 IPv4-mapped";
  } else if ((chosen = first([](const GidEntry& g) { return g.type == "RoCE v2"; }))) {
    why = "RoCE v2 (no IPv4-mapped GID on the port)";
  } else if ((chosen = first([](const GidEntry& g) { return g.type == "RoCE v1"; }))) {
    why = "RoCE v1 (no RoCE v2 GID on the port)";
  } else if ((chosen = first([](const GidEntry& g) { return g.type == "IB"; }))) {
    why = "InfiniBand";
  }
  if (chosen == nullptr) {
    why = "the port has no valid GID";
    return std::nullopt;
  }
  why = "gid " + std::to_string(chosen->index) + " " + chosen->gid + ": " + why;
  return chosen->index;
}

std::optional<uint32_t> find_gid(const std::vector<GidEntry>& gids, const std::string& wanted,
                                 std::string& why) {
  for (const auto& entry : gids) {
    const bool match = wanted == "link_local" ? entry.gid.rfind("fe80:", 0) == 0
                       : wanted == "roce_v1"  ? entry.type == "RoCE v1"
                                              : std::to_string(entry.index) == wanted;
    if (match) return entry.index;
  }
  std::string table;
  for (const auto& entry : gids)
    table += (table.empty() ? "" : ", ") + std::to_string(entry.index) + " " + entry.gid + " (" +
             entry.type + ")";
  why = "no GID matches gid \"" + wanted + "\"; the table: " + (table.empty() ? "empty" : table);
  return std::nullopt;
}

std::string gid_family(const std::string& gid) {
  if (gid.rfind("::ffff:", 0) == 0) return "IPv4";
  if (gid.rfind("fe80:", 0) == 0) return "IPv6 link-local";
  return "IPv6";
}

}  // namespace faultline::transports::verbs
