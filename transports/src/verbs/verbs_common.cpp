#include "verbs_common.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace faultline::transports::verbs {

Error verbs_call_error(std::string call, int err, const DeviceInfo& device,
                       std::optional<uint32_t> qp, std::string message) {
  Error error = errno_error(std::move(call), err, std::move(message));
  error.where = {"verbs", device.native_provider, device.name, device.port, qp};
  return error;
}

uint32_t mtu_bytes(ibv_mtu mtu) {
  switch (mtu) {
    case IBV_MTU_256: return 256;
    case IBV_MTU_512: return 512;
    case IBV_MTU_1024: return 1024;
    case IBV_MTU_2048: return 2048;
    case IBV_MTU_4096: return 4096;
  }
  return 0;
}

ibv_mtu mtu_from_bytes(uint32_t bytes) {
  if (bytes >= 4096) return IBV_MTU_4096;
  if (bytes >= 2048) return IBV_MTU_2048;
  if (bytes >= 1024) return IBV_MTU_1024;
  if (bytes >= 512) return IBV_MTU_512;
  return IBV_MTU_256;
}

std::string gid_to_string(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, text, sizeof text);
  return text;
}

bool gid_from_string(const std::string& text, ibv_gid& gid) {
  return inet_pton(AF_INET6, text.c_str(), gid.raw) == 1;
}

}  // namespace faultline::transports::verbs
