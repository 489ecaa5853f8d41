#include "faultline/transports/address_text.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <nlohmann/json.hpp>

namespace faultline::transports {

namespace {

// The socket address in `address` when it is exactly one (what fi_getname gives for the
// socket providers), as host text and port.
bool socket_address(std::span<const std::byte> address, std::string& host, uint16_t& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (address.size() == sizeof(sockaddr_in)) {
    sockaddr_in in{};
    std::memcpy(&in, address.data(), sizeof in);
    if (in.sin_family != AF_INET) return false;
    inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    host = text;
    port = ntohs(in.sin_port);
    return true;
  }
  if (address.size() == sizeof(sockaddr_in6)) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, address.data(), sizeof in6);
    if (in6.sin6_family != AF_INET6) return false;
    inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    host = "[" + std::string(text) + "]";
    port = ntohs(in6.sin6_port);
    return true;
  }
  return false;
}

// A verbs address: the JSON its endpoint publishes (qpn, gid, ...), or null.
nlohmann::json verbs_address(std::span<const std::byte> address) {
  if (address.empty() || static_cast<char>(address.front()) != '{') return nullptr;
  const std::string text(reinterpret_cast<const char*>(address.data()), address.size());
  nlohmann::json blob = nlohmann::json::parse(text, nullptr, false);
  if (!blob.is_object() || !blob.contains("qpn") || !blob.contains("gid") ||
      !blob.at("gid").is_string())
    return nullptr;
  return blob;
}

}  // namespace

std::string address_text(std::span<const std::byte> address) {
  std::string host;
  uint16_t port = 0;
  if (socket_address(address, host, port)) return host + ":" + std::to_string(port);
  if (const nlohmann::json verbs = verbs_address(address); !verbs.is_null())
    return "qpn " + verbs.at("qpn").dump() + " gid " + verbs.value("gid", std::string("?"));
  return "a " + std::to_string(address.size()) + "-byte address";
}

std::string address_host(std::span<const std::byte> address) {
  std::string host;
  uint16_t port = 0;
  if (socket_address(address, host, port)) {
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    return host;
  }
  if (const nlohmann::json verbs = verbs_address(address); !verbs.is_null())
    return verbs.value("gid", std::string());
  return "";
}

}  // namespace faultline::transports
