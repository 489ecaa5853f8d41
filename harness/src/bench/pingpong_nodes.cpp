// `bench pingpong --server` / `--client HOST`: the two sides on two nodes, as perftest's and
// fi_pingpong's server and client. The client sends its options over a TCP connection, both
// swap endpoint addresses over it, and the ping-pong runs as in the two-process form.
#include <unistd.h>

#include <algorithm>

#include "devices/agent_device.hpp"
#include "faultline/harness/base/net_address.hpp"
#include "faultline/harness/control/channel.hpp"
#include "pingpong_loop.hpp"

namespace faultline::harness::bench {

namespace {

using nlohmann::json;

// What the server takes from a client: bounded, so a client cannot make it allocate the
// machine or spin for days.
constexpr size_t kMostSizes = 64;
constexpr size_t kLargestSize = size_t{1} << 30;
constexpr uint64_t kMostOperations = 100'000'000;

json options_message(const PingpongOptions& options) {
  return {{"sizes", options.sizes},
          {"iterations", options.iterations},
          {"warmup", options.warmup},
          {"max_inline", options.max_inline ? json(*options.max_inline) : json(nullptr)},
          {"duration_seconds",
           options.duration_seconds ? json(*options.duration_seconds) : json(nullptr)}};
}

Result<PingpongOptions> options_from(const json& message, PingpongOptions server) {
  try {
    const auto sizes = message.at("sizes").get<std::vector<size_t>>();
    const auto iterations = message.at("iterations").get<uint64_t>();
    const auto warmup = message.at("warmup").get<uint64_t>();
    if (sizes.empty() || sizes.size() > kMostSizes ||
        std::any_of(sizes.begin(), sizes.end(),
                    [](size_t s) { return s == 0 || s > kLargestSize; }) ||
        iterations == 0 || iterations > kMostOperations || warmup > kMostOperations)
      return Error{ErrorCode::kProtocolViolation,
                   "the client asked for sizes, iterations or warm-up out of bounds (1 to " +
                       std::to_string(kMostSizes) + " sizes of 1 B to 1 GiB, at most " +
                       std::to_string(kMostOperations) + " operations)"};
    server.sizes = sizes;
    server.iterations = iterations;
    server.warmup = warmup;
    if (message.at("max_inline").is_number_unsigned())
      server.max_inline = message.at("max_inline").get<uint32_t>();
    if (const json& duration = message.at("duration_seconds"); duration.is_number()) {
      const double seconds = duration.get<double>();
      if (!(seconds > 0 && seconds <= 3600))
        return Error{ErrorCode::kProtocolViolation,
                     "the client asked for a duration outside 0 to 3600 s"};
      server.duration_seconds = seconds;
    }
    return server;
  } catch (const json::exception& e) {
    return Error{ErrorCode::kProtocolViolation, std::string("the client's options: ") + e.what()};
  }
}

// The device toward the other node when --device was left out (as an agent picks its own).
PingpongOptions toward_peer(PingpongOptions options, int fd) {
  std::string why;
  options.target = target_toward(options.target, local_address(fd), why);
  return options;
}

}  // namespace

Result<std::vector<LatencyRow>> run_pingpong_client(const PingpongOptions& asked,
                                                    const std::string& server, uint16_t port) {
  auto fd = connect_tcp({server, port});
  if (!fd.ok()) {
    Error error = std::move(fd).take_error();
    return std::move(error).with_hint("is `faultline bench pingpong --server -p " +
                                      std::to_string(port) + "` running on " + server + "?");
  }
  control::Channel peer(fd.value(), "benchmark server " + server);
  const PingpongOptions options = toward_peer(asked, fd.value());
  FAULTLINE_RETURN_IF_ERROR(peer.send(options_message(options)));
  return run_initiator(options, peer);
}

Result<PingpongOptions> run_pingpong_server(const PingpongOptions& asked, uint16_t port,
                                            std::chrono::seconds wait) {
  auto fd = accept_one_tcp(port, wait);
  if (!fd.ok()) return fd.error();
  control::Channel peer(fd.value(), "benchmark client");
  auto message = peer.receive(kBenchStall);
  if (!message.ok()) return message.error();
  auto options = options_from(message.value(), toward_peer(asked, fd.value()));
  if (!options.ok()) {
    (void)peer.send({{"error", options.error().describe()}});
    return options.error();
  }
  FAULTLINE_RETURN_IF_ERROR(serve_responder(options.value(), peer));
  return options;
}

}  // namespace faultline::harness::bench
