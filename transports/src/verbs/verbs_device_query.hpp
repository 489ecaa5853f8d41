#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "verbs_common.hpp"

namespace faultline::transports::verbs {

/// Everything faultline reports about one port of an open device: limits from
/// ibv_query_device and ibv_query_port, max_inline_data found by creating QPs (verbs does not
/// advertise it), capabilities, and the GID table with types.
Result<DeviceInfo> query_port(ibv_context* context, ibv_pd* pd, uint32_t port);

/// The QP types a plain ibv_create_qp makes (RC, UC, UD; XRC needs an XRC domain and a
/// driver's own type its direct-verbs API, so neither is probed). Creates and destroys one QP
/// of each: only for `devices --save-profile` and `--compare-profile`, never for a run.
std::map<std::string, bool> probe_qp_types(ibv_context* context, ibv_pd* pd);

/// The GID a RoCE or IB port should use when none is asked for: a RoCE v2 IPv4-mapped GID
/// first, then RoCE v2, then RoCE v1, then IB. `why` says what was chosen and why.
std::optional<uint32_t> choose_gid(const std::vector<GidEntry>& gids, std::string& why);

/// The GID an endpoint asked for by `wanted` (EndpointConfig::gid: "link_local", "roce_v1" or
/// an index); nullopt when the table has none, and `why` then lists the table.
std::optional<uint32_t> find_gid(const std::vector<GidEntry>& gids, const std::string& wanted,
                                 std::string& why);

/// "IPv4" (an IPv4-mapped GID), "IPv6 link-local" or "IPv6": RoCE v2 routes a packet by it.
std::string gid_family(const std::string& gid);

}  // namespace faultline::transports::verbs
