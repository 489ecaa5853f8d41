#include "faultline/harness/base/first_contact.hpp"

#include "faultline/harness/base/net_address.hpp"
#include "faultline/transports/address_text.hpp"

namespace faultline::harness {

nlohmann::json FirstContact::own_info(const std::string& device) {
  return {{"host", host_name()}, {"device", device}};
}

void FirstContact::joined(std::span<const std::byte> own, std::span<const std::byte> peer,
                          const std::string& own_device, const nlohmann::json& peer_info) {
  const auto text = [&peer_info](const char* key) {
    const auto found = peer_info.find(key);
    return found != peer_info.end() && found->is_string() ? found->get<std::string>()
                                                          : std::string("?");
  };
  const std::string own_host = host_name();
  const std::string peer_host = text("host");
  addresses_ = "this side " + transports::address_text(own) + " on " + own_host + " (device " +
               own_device + "), the peer " + transports::address_text(peer) + " on " + peer_host +
               " (device " + text("device") + ")";
  loopback_across_hosts_ =
      peer_host != own_host && (is_loopback_address(transports::address_host(own)) ||
                                is_loopback_address(transports::address_host(peer)));
}

std::string FirstContact::note() const {
  return reached_ || addresses_.empty() ? "" : "; addresses: " + addresses_;
}

std::string FirstContact::hint() const {
  if (reached_ || addresses_.empty()) return "";
  if (loopback_across_hosts_) {
    return "the two sides are on different hosts but one offered a loopback address: start "
           "each agent with --device naming the interface that reaches the other hosts "
           "(faultline devices lists them), or leave --device out so the agent takes the one "
           "toward the coordinator";
  }
  return "nothing got through between these two addresses: check that each reaches the other "
         "(routes, a firewall, the interface's state), or choose the device with --device";
}

}  // namespace faultline::harness
