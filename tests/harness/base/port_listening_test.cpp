// Whether a program listens yet, read from /proc without connecting to it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "faultline/harness/base/port_listening.hpp"

using faultline::harness::port_listening;
using faultline::harness::wait_until_listening;
using Clock = std::chrono::steady_clock;

namespace {

// A bound TCP socket on 127.0.0.1 and its port; listening only once asked to.
struct BoundSocket {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  uint16_t port = 0;
  BoundSocket() {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port = ntohs(address.sin_port);
  }
  ~BoundSocket() { ::close(fd); }
  BoundSocket(const BoundSocket&) = delete;
  BoundSocket& operator=(const BoundSocket&) = delete;
};

}  // namespace

TEST_CASE("a port counts as listening once listen() was called on it, not when bound", "[unit]") {
  BoundSocket socket;
  CHECK_FALSE(port_listening(::getpid(), socket.port));
  REQUIRE(::listen(socket.fd, 1) == 0);
  CHECK(port_listening(::getpid(), socket.port));
  CHECK(wait_until_listening(::getpid(), std::to_string(socket.port), Clock::now()));
}

TEST_CASE("waiting for a port ends when the program ends, the time is up, or it is no port",
          "[unit]") {
  BoundSocket never;  // bound, never listening
  const std::string port = std::to_string(never.port);
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  auto begun = Clock::now();
  // The child ends at once (a zombie until reaped): no ten-second wait for it.
  CHECK_FALSE(wait_until_listening(child, port, begun + std::chrono::seconds(10)));
  CHECK(Clock::now() - begun < std::chrono::seconds(5));
  ::waitpid(child, nullptr, 0);
  begun = Clock::now();
  CHECK_FALSE(wait_until_listening(::getpid(), port, begun + std::chrono::milliseconds(200)));
  CHECK(Clock::now() - begun >= std::chrono::milliseconds(200));
  for (const std::string text : {"", "http", "70000", "0", "12ab"})
    CHECK_FALSE(wait_until_listening(::getpid(), text, Clock::now() + std::chrono::seconds(10)));
}
