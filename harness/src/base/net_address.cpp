#include "faultline/harness/base/net_address.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <unistd.h>

#include <cctype>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace faultline::harness {

Result<HostPort> parse_host_port(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return Error{ErrorCode::kInvalidArgument,
                 "'" + text + "' is not HOST:PORT (for example 127.0.0.1:7300)"};
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string port_text = text.substr(colon + 1);
  unsigned long port = 0;
  try {
    size_t used = 0;
    port = std::stoul(port_text, &used);
    if (used != port_text.size() || port > 65535) throw std::out_of_range("port");
  } catch (const std::exception&) {
    return Error{ErrorCode::kInvalidArgument,
                 "'" + port_text + "' in '" + text + "' is not a port (0-65535)"};
  }
  return HostPort{host, static_cast<uint16_t>(port)};
}

Result<int> accept_one_tcp(uint16_t port, std::chrono::milliseconds wait) {
  const int listener = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0)
    return errno_error("socket", errno, "to listen on port " + std::to_string(port));
  const auto close_listener = [listener] { ::close(listener); };
  const int yes = 1;
  const int no = 0;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  ::setsockopt(listener, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no);  // IPv4 too
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_any;
  address.sin6_port = htons(port);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener, 1) != 0) {
    Error error = errno_error("bind", errno, "port " + std::to_string(port));
    close_listener();
    return std::move(error).with_hint("is another process listening there? choose another -p");
  }
  pollfd ready{listener, POLLIN, 0};
  const int polled = ::poll(&ready, 1, static_cast<int>(wait.count()));
  if (polled <= 0) {
    close_listener();
    return Error{ErrorCode::kTimeout, "no client connected to port " + std::to_string(port) +
                                          " within " + std::to_string(wait.count() / 1000) + " s"};
  }
  const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  Error failed = errno_error("accept", errno, "on port " + std::to_string(port));
  close_listener();
  if (fd < 0) return failed;
  return fd;
}

Result<int> connect_tcp(const HostPort& address) {
  boost::asio::io_context io;
  boost::system::error_code error;
  boost::asio::ip::tcp::resolver resolver(io);
  auto endpoints = resolver.resolve(address.host, std::to_string(address.port), error);
  if (error) {
    return Error{ErrorCode::kNotFound, "cannot resolve '" + address.host + "': " + error.message()};
  }
  boost::asio::ip::tcp::socket socket(io);
  boost::asio::connect(socket, endpoints, error);
  if (error) {
    Error failed = errno_error("connect", error.value(), "to " + address.text());
    failed.code = ErrorCode::kIoError;
    return failed;
  }
  socket.set_option(boost::asio::ip::tcp::no_delay(true));
  // The channel owns a plain descriptor; the Asio socket closes its own. Close-on-exec: a
  // scenario child must not hold the agent's connection open after the agent dies.
  const int fd = ::fcntl(socket.native_handle(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return errno_error("dup", errno, "the control socket");
  return fd;
}

namespace {

// The numeric text of an IPv4 or IPv6 socket address, or "".
std::string numeric_text(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = "";
  if (address == nullptr) return "";
  if (address->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text, sizeof text);
  } else if (address->sa_family == AF_INET6) {
    const in6_addr& in6 = reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
    // An IPv4 peer of a dual-stack socket: its IPv4 address, as the interface holds it.
    if (IN6_IS_ADDR_V4MAPPED(&in6)) {
      inet_ntop(AF_INET, &in6.s6_addr[12], text, sizeof text);
    } else {
      inet_ntop(AF_INET6, &in6, text, sizeof text);
    }
  }
  return text;
}

}  // namespace

std::string local_address(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
  return numeric_text(reinterpret_cast<const sockaddr*>(&address));
}

std::string interface_with_address(const std::string& address) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string name;
  for (const ifaddrs* entry = list; entry != nullptr && name.empty(); entry = entry->ifa_next) {
    if (numeric_text(entry->ifa_addr) == address && entry->ifa_name != nullptr)
      name = entry->ifa_name;
  }
  freeifaddrs(list);
  return name;
}

bool is_host_address(const std::string& text) {
  unsigned char binary[sizeof(in6_addr)];
  if (inet_pton(AF_INET, text.c_str(), binary) == 1 ||
      inet_pton(AF_INET6, text.c_str(), binary) == 1)
    return true;
  if (text.empty() || text.size() > 253) return false;
  size_t label = 0;  // length of the label so far
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      if (label == 0 || text[i - 1] == '-') return false;
      label = 0;
      continue;
    }
    const bool letter_or_digit = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (!letter_or_digit && !(c == '-' && label > 0)) return false;
    if (++label > 63) return false;
  }
  return label > 0 && text.back() != '-';
}

bool is_loopback_address(const std::string& address) {
  return address.starts_with("127.") || address == "::1" || address.starts_with("::ffff:127.");
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::string free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof address;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  if (fd >= 0) ::close(fd);
  return std::to_string(port);
}

}  // namespace faultline::harness
