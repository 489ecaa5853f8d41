#include "faultline/harness/net_address.hpp"

#include <fcntl.h>

#include <unistd.h>

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

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace faultline::harness
